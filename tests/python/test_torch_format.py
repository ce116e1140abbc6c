"""PyTorch's checkpoint format: ember.load reads a file torch.save wrote (tests/python/data/torch_saved.pt,
made by make_torch_saved.py), ember.save(format="torch") writes one that torch.load reads (checked when
torch is importable) and that ember reads back; weights_only, map_location, file objects, bad files."""
import collections
import io
import os
import pickle

import numpy as np
import pytest

import ember
from harness import CUDA_AVAILABLE, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
SAVED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "torch_saved.pt")

CASES = []  # no OpCase rows: file formats, not ops


def test_reads_a_file_torch_wrote():
    state = ember.load(SAVED)
    assert isinstance(state, collections.OrderedDict)
    assert list(state) == ["w", "row", "w_t", "bf16", "f16", "f64", "i64", "i8", "u8", "mask", "param", "meta"]
    np.testing.assert_array_equal(state["w"].numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(state["row"].numpy(), [3, 4, 5])
    np.testing.assert_array_equal(state["w_t"].numpy(), np.arange(6.0).reshape(2, 3).T)
    assert state["bf16"].dtype == ember.bfloat16
    np.testing.assert_allclose(state["bf16"].float().numpy(), [1.5, -2.25, 3.0e38], rtol=2 ** -8)  # bf16 rounding
    assert state["f16"].dtype == ember.float16 and state["f16"].float().tolist() == [0.5, -65504.0]
    assert state["f64"].dtype == ember.float64 and state["f64"].tolist() == [1.0 / 3.0]
    assert state["i64"].tolist() == [-(2 ** 40), 7] and state["i8"].tolist() == [-128, 127]
    assert state["u8"].dtype == ember.uint8 and state["u8"].tolist() == [0, 255]
    assert state["mask"].dtype == ember.bool and state["mask"].tolist() == [True, False, True]
    assert isinstance(state["param"], ember.nn.Parameter) and state["param"].requires_grad
    assert state["meta"] == {"epoch": 3, "lr": 0.1, "tags": ("a", None), "best": 2.5}


def test_views_that_shared_a_storage_still_share_it():
    state = ember.load(SAVED)
    state["w"][1, 0] = -1.0
    assert state["row"].tolist() == [-1.0, 4.0, 5.0]
    assert state["w_t"][0, 1].item() == -1.0


def test_weights_only_refuses_other_globals_and_false_allows_them():
    payload = io.BytesIO()
    ember.save({"x": ember.ones(2)}, payload, format="torch")
    with_counter = _rewrite_pickle(payload.getvalue(), {"x": 1, "c": collections.Counter(a=2)})
    with pytest.raises(pickle.UnpicklingError, match="collections.Counter.*weights_only=False"):
        ember.load(io.BytesIO(with_counter))
    assert ember.load(io.BytesIO(with_counter), weights_only=False)["c"] == collections.Counter(a=2)


class _Config:  # a user class a checkpoint may hold
    def __init__(self, lr):
        self.lr = lr


def test_safe_globals_let_weights_only_load_a_users_class():
    payload = io.BytesIO()
    ember.save({"x": ember.ones(2)}, payload, format="torch")
    with_config = _rewrite_pickle(payload.getvalue(), {"cfg": _Config(0.5)})
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        ember.load(io.BytesIO(with_config))
    with ember.serialization.safe_globals([_Config]):
        assert ember.load(io.BytesIO(with_config))["cfg"].lr == 0.5
    assert _Config not in ember.serialization.get_safe_globals()  # the with block's allowance ended
    ember.serialization.add_safe_globals([(_Config, f"{__name__}._Config")])
    try:
        assert ember.load(io.BytesIO(with_config))["cfg"].lr == 0.5
    finally:
        ember.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        ember.load(io.BytesIO(with_config))


def test_a_state_dict_keeps_its_metadata_through_the_torch_format():
    model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3))
    payload = io.BytesIO()
    ember.save(model.state_dict(), payload, format="torch")
    back = ember.load(io.BytesIO(payload.getvalue()))
    assert back._metadata == {"": {"version": 1}, "0": {"version": 1}, "1": {"version": 2}}
    if torch is not None:
        assert torch.load(io.BytesIO(payload.getvalue()), weights_only=True)._metadata == back._metadata


def test_weights_only_takes_sets_pickled_under_python_2_names():
    # Protocol 2 names set as __builtin__.set; torch's weights_only loader takes it, and so does ember's.
    payload = io.BytesIO()
    ember.save({"labels": {1, 2}, "frozen": frozenset({3})}, payload)
    assert ember.load(io.BytesIO(payload.getvalue())) == {"labels": {1, 2}, "frozen": frozenset({3})}


def test_save_and_load_take_torchs_other_arguments(tmp_path):
    path = tmp_path / "ckpt.pt"
    ember.save({"a": ember.arange(3)}, path, pickle, 2)  # torch.save(obj, f, pickle_module, pickle_protocol)
    assert ember.load(path, None, pickle, weights_only=True, mmap=True)["a"].tolist() == [0, 1, 2]
    ember.save({"a": ember.arange(3)}, path, "torch")  # format's old positional place
    import zipfile
    assert zipfile.is_zipfile(path)
    with pytest.raises(NotImplementedError, match="pickle_module"):
        ember.load(path, pickle_module=object())


def test_dtypes_sizes_and_devices_pickle_under_torchs_names():
    # torch.load(weights_only=True) refuses ember's own names: they are written as torch.float32,
    # torch.Size and torch.device, and read back as ember's.
    payload = io.BytesIO()
    ember.save({"dtype": ember.bfloat16, "shape": ember.Size([2, 3]), "device": ember.device("cpu")}, payload,
               format="torch")
    import zipfile
    data = zipfile.ZipFile(io.BytesIO(payload.getvalue()))
    pkl = data.read(next(n for n in data.namelist() if n.endswith("data.pkl")))
    assert b"ember" not in pkl and b"torch\nbfloat16" in pkl and b"torch\nSize" in pkl and b"torch\ndevice" in pkl
    back = ember.load(io.BytesIO(payload.getvalue()))
    assert back["dtype"] is ember.bfloat16 and back["shape"] == ember.Size([2, 3])
    assert isinstance(back["shape"], ember.Size) and back["device"] == ember.device("cpu")
    if torch is not None:
        loaded = torch.load(io.BytesIO(payload.getvalue()), weights_only=True)
        assert loaded == {"dtype": torch.bfloat16, "shape": torch.Size([2, 3]), "device": torch.device("cpu")}


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_dtypes_and_devices_pickle_under_every_protocol(protocol):
    # Protocols 0 and 1 aborted the interpreter (pybind11's state-based pickling needs protocol 2).
    for value in (ember.float32, ember.bfloat16, ember.bool):
        assert pickle.loads(pickle.dumps(value, protocol=protocol)) is value
    assert pickle.loads(pickle.dumps(ember.device("cuda:1"), protocol=protocol)) == ember.device("cuda:1")


def _rewrite_pickle(zip_bytes, obj):
    """The same zip with data.pkl replaced by a plain pickle of obj (what a checkpoint with an arbitrary
    object looks like to the reader)."""
    import zipfile
    src = zipfile.ZipFile(io.BytesIO(zip_bytes))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in src.namelist():
            z.writestr(name, pickle.dumps(obj, protocol=2) if name.endswith("data.pkl") else src.read(name))
    return out.getvalue()


def test_round_trip_through_the_torch_format():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    opt = ember.optim.AdamW(model.parameters(), lr=1e-3)
    model(ember.randn(5, 3)).sum().backward()
    opt.step()
    checkpoint = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 7,
                  "half": ember.tensor([1.5, -2.0], dtype=ember.bfloat16), "weight": model[0].weight}
    buffer = io.BytesIO()
    ember.save(checkpoint, buffer, format="torch")
    back = ember.load(io.BytesIO(buffer.getvalue()))
    assert back["epoch"] == 7 and back["half"].dtype == ember.bfloat16 and back["half"].tolist() == [1.5, -2.0]
    assert isinstance(back["weight"], ember.nn.Parameter)
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(back["model"][key].numpy(), value.numpy())
    restored = ember.optim.AdamW(model.parameters(), lr=1e-3)
    restored.load_state_dict(back["opt"])
    np.testing.assert_array_equal(restored.state_dict()["state"][0]["exp_avg"].numpy(),
                                  opt.state_dict()["state"][0]["exp_avg"].numpy())


def test_paths_and_formats(tmp_path):
    path = tmp_path / "model.pt"
    ember.save({"a": ember.arange(3)}, path, format="torch")
    import zipfile
    assert zipfile.is_zipfile(path) and "model/data.pkl" in zipfile.ZipFile(path).namelist()
    assert ember.load(path)["a"].tolist() == [0, 1, 2]
    ember.save({"a": ember.arange(3)}, path)  # the default stays safetensors
    assert not zipfile.is_zipfile(path) and ember.load(path)["a"].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="format must be"):
        ember.save({}, path, format="pickle")


def test_map_location():
    state = ember.load(SAVED, map_location="cpu")
    assert str(state["w"].device) == "cpu"
    assert str(ember.load(SAVED, map_location={"cpu": "cpu"})["w"].device) == "cpu"
    assert str(ember.load(SAVED, map_location=lambda storage, location: "cpu")["w"].device) == "cpu"
    if not CUDA_AVAILABLE:
        with pytest.raises(RuntimeError, match="map_location='cpu'"):
            ember.load(SAVED, map_location="cuda")


def test_bad_files(tmp_path):
    legacy = tmp_path / "old.pt"
    legacy.write_bytes(b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19" + b"\x00" * 16)
    with pytest.raises(RuntimeError, match="legacy format"):
        ember.load(legacy)
    import zipfile
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("x/readme", b"hi")
    with pytest.raises(RuntimeError, match="not a PyTorch checkpoint"):
        ember.load(empty)
    broken = tmp_path / "broken.pt"
    data = io.BytesIO(open(SAVED, "rb").read())
    with zipfile.ZipFile(data) as src, zipfile.ZipFile(broken, "w") as z:
        for name in src.namelist():
            if not name.endswith("data/0"):
                z.writestr(name, src.read(name))
    with pytest.raises(RuntimeError, match="storage '0'"):
        ember.load(broken)


@pytest.mark.parametrize("stride", [(2**61, 2**61), (2**62, 1), (4, 1)])
def test_a_checkpoint_whose_strides_leave_its_storage_raises(tmp_path, stride):
    # A crafted file: a 3 x 3 tensor's strides rewritten to reach past its storage (or past int64,
    # where the extent would wrap around). Loading must raise, not build a view that reads wild
    # memory.
    import zipfile
    good, bad = tmp_path / "good.pt", tmp_path / "bad.pt"
    ember.save({"a": ember.ones(3, 3)}, good, format="torch")

    def long1(v):
        return b"\x8a\x08" + v.to_bytes(8, "little", signed=True)
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as out:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("data.pkl"):
                assert data.count(b"K\x03K\x01\x86") == 1  # the stride tuple (3, 1)
                data = data.replace(b"K\x03K\x01\x86", long1(stride[0]) + long1(stride[1]) + b"\x86")
            out.writestr(name, data)
    with pytest.raises(RuntimeError, match="as_strided"):
        ember.load(bad)


def test_a_bool_storage_holding_bytes_other_than_0_and_1_loads_as_true(tmp_path):
    import zipfile
    good, bad = tmp_path / "good.pt", tmp_path / "bad.pt"
    ember.save({"b": ember.tensor([True, False, True, True])}, good, format="torch")
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as out:
        for name in src.namelist():
            data = src.read(name)
            if "/data/" in name and data == bytes([1, 0, 1, 1]):
                data = bytes([5, 0, 7, 1])
            out.writestr(name, data)
    b = ember.load(bad)["b"]
    assert b.tolist() == [True, False, True, True] and b.sum().item() == 3
    assert (b == True).tolist() == [True, False, True, True]  # noqa: E712


@needs_torch
def test_torch_reads_what_ember_writes(tmp_path):
    model = ember.nn.Linear(3, 2)
    path = tmp_path / "ember.pt"
    ember.save({"model": model.state_dict(), "step": 4, "p": model.weight,
                "bf": ember.tensor([0.5, 3.0], dtype=ember.bfloat16)}, path, format="torch")
    loaded = torch.load(path)  # torch's default weights_only=True
    reference = torch.nn.Linear(3, 2)
    reference.load_state_dict(loaded["model"])
    np.testing.assert_array_equal(reference.weight.detach().numpy(), model.weight.detach().numpy())
    assert loaded["step"] == 4 and isinstance(loaded["p"], torch.nn.Parameter)
    assert loaded["bf"].dtype == torch.bfloat16 and loaded["bf"].tolist() == [0.5, 3.0]


@needs_torch
def test_reads_what_this_torch_writes(tmp_path):
    path = tmp_path / "torch.pt"
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2))
    torch.save(net.state_dict(), path)
    state = ember.load(path)
    model = ember.nn.Sequential(ember.nn.Conv2d(1, 2, 3), ember.nn.BatchNorm2d(2))
    model.load_state_dict(state)
    x = np.random.default_rng(0).standard_normal((1, 1, 5, 5)).astype(np.float32)
    net.eval()
    model.eval()
    np.testing.assert_allclose(model(ember.tensor(x)).detach().numpy(), net(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
