"""ember.save / ember.load: safetensors checkpoints with nested structure."""
import json
import os
import pickle
import struct

import numpy as np
import pytest

import ember
from ember import serialization


def same(a, b):
    assert isinstance(b, ember.Tensor)
    assert a.dtype == b.dtype and list(a.shape) == list(b.shape)
    np.testing.assert_array_equal(a.float().numpy() if a.dtype == ember.bfloat16 else a.numpy(),
                                  b.float().numpy() if b.dtype == ember.bfloat16 else b.numpy())


def assert_tree_equal(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, ember.Tensor):
        same(a, b)
    elif isinstance(a, dict):
        assert list(a.keys()) == list(b.keys())
        for k in a:
            assert_tree_equal(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_tree_equal(x, y)
    elif isinstance(a, float) and a != a:
        assert b != b
    else:
        assert a == b


def optimizer_like():
    return {
        "state": {0: {"step": 3, "exp_avg": ember.randn(2, 3), "exp_avg_sq": ember.rand(2, 3)},
                  1: {"step": 3, "momentum_buffer": None}},
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0,
                          "amsgrad": False, "foreach": None, "params": [0, 1],
                          "name": "all", "nan": float("nan"), "inf": float("-inf")}],
    }


def test_nested_round_trip(tmp_path):
    obj = {"model": {"fc.weight": ember.randn(4, 3), "fc.bias": ember.zeros(4)},
           "optimizer": optimizer_like(), "epoch": 7, "loss": 0.25, "tag": "run-1",
           "history": [1.0, 2.0, [ember.arange(3)]], "empty": {}, "none": None}
    path = tmp_path / "ck.safetensors"
    ember.save(obj, path)
    back = ember.load(path)
    assert_tree_equal(obj, back)
    # int keys of the optimizer state stay ints
    assert set(back["optimizer"]["state"]) == {0, 1}
    assert isinstance(back["optimizer"]["param_groups"][0]["betas"], tuple)


def test_single_tensor_and_scalars(tmp_path):
    for obj in [ember.randn(3), ember.tensor(2.5), 3, "text", None, [1, (2, 3)]]:
        ember.save(obj, tmp_path / "x")
        assert_tree_equal(obj, ember.load(tmp_path / "x"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64",
                                   "int32", "int8", "uint8", "bool"])
def test_all_dtypes(tmp_path, dtype):
    dt = getattr(ember, dtype)
    t = (ember.randn(3, 5) * 50).to(dt)
    ember.save({"t": t, "e": ember.zeros(0, 2, dtype=dt)}, tmp_path / "d")
    back = ember.load(tmp_path / "d")
    same(t, back["t"])
    same(ember.zeros(0, 2, dtype=dt), back["e"])


def test_non_contiguous(tmp_path):
    base = ember.arange(24).reshape(4, 6).float()
    views = {"t": base.t(), "step": base[:, ::2], "exp": ember.ones(3, 1).expand(3, 4)}
    ember.save(views, tmp_path / "v")
    back = ember.load(tmp_path / "v")
    for k in views:
        np.testing.assert_array_equal(views[k].numpy(), back[k].numpy())
        assert back[k].is_contiguous()


def test_plain_state_dict_is_plain_safetensors(tmp_path):
    sd = {"layer.weight": ember.randn(2, 2), "layer.bias": ember.randn(2)}
    ember.save(sd, tmp_path / "sd")
    raw = (tmp_path / "sd").read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    assert set(header) == {"layer.weight", "layer.bias", "__metadata__"}
    assert header["layer.weight"]["dtype"] == "F32" and header["layer.weight"]["shape"] == [2, 2]
    assert all(isinstance(v, str) for v in header["__metadata__"].values())
    assert (8 + n) % 8 == 0


def test_save_file_load_file_aliases(tmp_path):
    sd = {"a": ember.randn(3)}
    serialization.save_file(sd, tmp_path / "f")
    assert_tree_equal(sd, serialization.load_file(tmp_path / "f"))
    with pytest.raises(TypeError):
        serialization.save_file({"a": 1}, tmp_path / "g")


def test_unsaveable_objects(tmp_path):
    # what neither safetensors nor pickle can hold fails and leaves no file behind
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        ember.save({"f": lambda: 0}, tmp_path / "x")
    assert not os.path.exists(tmp_path / "x")


def test_other_objects_fall_back_to_pickle(tmp_path):
    # as torch.save: tuple keys and plain Python objects are pickled (PyTorch's format) and need
    # weights_only=False to come back
    import argparse
    obj = {(1, 2): 3, "args": argparse.Namespace(lr=0.1), "w": ember.ones(2)}
    ember.save(obj, tmp_path / "x")
    back = ember.load(tmp_path / "x", weights_only=False)
    assert back[(1, 2)] == 3 and back["args"].lr == 0.1 and ember.equal(back["w"], obj["w"])
    with pytest.raises(pickle.UnpicklingError):
        ember.load(tmp_path / "x")


def test_atomic_failure_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "ck"
    ember.save({"w": ember.ones(3)}, path)
    before = path.read_bytes()

    def crash(*args):
        raise OSError("disk full")
    monkeypatch.setattr(serialization.os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"w": ember.zeros(1000)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ck"]  # no temp file left behind
    same(ember.ones(3), ember.load(path)["w"])


def test_failure_while_writing_data_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "ck"
    ember.save([ember.ones(2)], path)
    before = path.read_bytes()
    real = serialization._tensor_bytes
    calls = []

    def fail_second(t):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("interrupted")
        return real(t)
    monkeypatch.setattr(serialization, "_tensor_bytes", fail_second)
    with pytest.raises(RuntimeError, match="interrupted"):
        ember.save([ember.zeros(2), ember.zeros(3)], path)
    assert path.read_bytes() == before


def test_safetensors_bool_bytes_other_than_0_and_1_load_as_true(tmp_path):
    # A bool tensor holding byte 5 or 7 (another writer's file) would compare and sum wrongly.
    header = json.dumps({"b": {"dtype": "BOOL", "shape": [4], "data_offsets": [0, 4]}}).encode()
    path = tmp_path / "bools.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes([5, 0, 7, 1]))
    b = ember.load(path)["b"]
    assert b.tolist() == [True, False, True, True]
    assert b.sum().item() == 3 and (b == True).tolist() == [True, False, True, True]  # noqa: E712
    assert (~b).tolist() == [False, True, False, False]


def test_truncated_file_raises(tmp_path):
    path = tmp_path / "ck"
    ember.save({"w": ember.randn(100), "meta": 1}, path)
    raw = path.read_bytes()
    for cut in [0, 5, 8, 20, len(raw) - 1]:
        (tmp_path / "cut").write_bytes(raw[:cut])
        with pytest.raises(RuntimeError, match="cut"):
            ember.load(tmp_path / "cut")


def test_foreign_and_corrupt_files_raise(tmp_path):
    bad = tmp_path / "bad"
    bad.write_bytes(b"PK\x03\x04 this is a zip file, not safetensors" * 4)
    with pytest.raises(RuntimeError, match="starts like a zip file.*not a readable one"):
        ember.load(bad)
    bad.write_bytes(b"<html> not a checkpoint at all </html>" * 4)
    with pytest.raises(RuntimeError, match="not a safetensors file"):
        ember.load(bad)

    def write(header, data=b""):
        head = json.dumps(header).encode()
        bad.write_bytes(struct.pack("<Q", len(head)) + head + data)
    write({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4)
    with pytest.raises(RuntimeError, match="truncated"):
        ember.load(bad)
    write({"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8)
    with pytest.raises(RuntimeError, match="needs 12"):
        ember.load(bad)
    write({"t": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8)
    with pytest.raises(RuntimeError, match="unsupported dtype"):
        ember.load(bad)
    write({"t": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4)
    with pytest.raises(RuntimeError, match="shape"):
        ember.load(bad)
    write({"t": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
           "__metadata__": {"ember": "{not json"}}, b"\0" * 4)
    with pytest.raises(RuntimeError, match="metadata"):
        ember.load(bad)
    write({"__metadata__": {"ember": json.dumps({"version": 1, "structure": {"T": "gone"}})}})
    with pytest.raises(RuntimeError, match="gone"):
        ember.load(bad)
    write([1, 2])
    with pytest.raises(RuntimeError, match="not a JSON object"):
        ember.load(bad)


def test_map_location_cpu(tmp_path):
    ember.save({"a": ember.ones(2)}, tmp_path / "m")
    same(ember.ones(2), ember.load(tmp_path / "m", map_location="cpu")["a"])


# ---- interop with the safetensors package

try:
    import safetensors.numpy as st_numpy
except ImportError:
    st_numpy = None
needs_safetensors = pytest.mark.skipif(
    st_numpy is None, reason="the safetensors package is not installed (pip install "
    "safetensors; tools/setup.sh does), so interop with it is not checked")


@needs_safetensors
def test_safetensors_reads_ember_file(tmp_path):
    sd = {"w": ember.randn(3, 4), "b": ember.arange(5), "m": ember.tensor([True, False]),
          "h": ember.randn(2).to(ember.float16), "u": ember.arange(4).to(ember.uint8)}
    ember.save(sd, tmp_path / "e.safetensors")
    loaded = st_numpy.load_file(str(tmp_path / "e.safetensors"))
    assert set(loaded) == set(sd)
    for k in sd:
        np.testing.assert_array_equal(loaded[k], sd[k].numpy())
        assert loaded[k].dtype == sd[k].numpy().dtype


@needs_safetensors
def test_ember_reads_safetensors_file(tmp_path):
    arrays = {"a": np.random.randn(3, 2).astype(np.float32), "b": np.arange(7, dtype=np.int32),
              "c": np.random.randn(4).astype(np.float64), "d": np.array([True, False]),
              "e": np.zeros((0, 3), np.int8), "f": np.array(1.5, np.float16)}
    st_numpy.save_file(arrays, str(tmp_path / "s.safetensors"), metadata={"format": "np"})
    back = ember.load(tmp_path / "s.safetensors")
    assert set(back) == set(arrays)
    for k in arrays:
        np.testing.assert_array_equal(back[k].numpy(), arrays[k])
        assert back[k].numpy().dtype == arrays[k].dtype


def test_overlapping_tensors_raise(tmp_path):
    bad = tmp_path / "overlap"
    head = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                       "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode()
    bad.write_bytes(struct.pack("<Q", len(head)) + head + b"\0" * 12)
    with pytest.raises(RuntimeError, match="overlap"):
        ember.load(bad)


def test_failure_during_fsync_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "ck"
    ember.save({"w": ember.ones(3)}, path)
    before = path.read_bytes()

    def broken_fsync(fd):
        raise OSError("I/O error")
    monkeypatch.setattr(serialization.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="I/O error"):
        ember.save({"w": ember.zeros(3)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ck"]


@needs_safetensors
def test_safetensors_reads_nested_checkpoint(tmp_path):
    ember.save(optimizer_like(), tmp_path / "opt")
    loaded = st_numpy.load_file(str(tmp_path / "opt"))
    assert set(loaded) == {"state.0.exp_avg", "state.0.exp_avg_sq"}
