"""ember.asarray and ember.frombuffer: values against numpy, memory sharing
where torch shares, the copy=True/False contract, and the errors torch
raises (ValueError) for bad counts and offsets; compared with torch when it
is importable."""
import array
import warnings

import numpy as np
import pytest

import ember
from harness import CUDA_AVAILABLE, torch

CASES = []  # no OpCase rows: constructors from Python objects


def np_of(t):
    return t.detach().numpy()


# ---- asarray --------------------------------------------------------------------------------

def test_asarray_of_a_tensor_is_the_tensor():
    t = ember.ones(2, 3)
    assert ember.asarray(t) is t
    assert ember.asarray(t, dtype=ember.float32, device="cpu", copy=False) is t


def test_asarray_copy_true_copies_a_tensor():
    t = ember.ones(3)
    c = ember.asarray(t, copy=True)
    assert c is not t
    c[0] = 5.0
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_asarray_converts_a_tensor_dtype_unless_copy_false():
    t = ember.tensor([1.5, 2.5])
    d = ember.asarray(t, dtype=ember.float64)
    assert d.dtype == ember.float64 and d.tolist() == [1.5, 2.5]
    with pytest.raises(ValueError, match="asarray: can't alias tensor"):
        ember.asarray(t, dtype=ember.float64, copy=False)


def test_asarray_shares_a_numpy_array():
    n = np.arange(4, dtype=np.float32)
    t = ember.asarray(n)
    n[0] = 7.0
    assert t.tolist() == [7.0, 1.0, 2.0, 3.0]
    assert t.dtype == ember.float32


def test_asarray_copy_true_does_not_share():
    n = np.arange(3, dtype=np.float64)
    t = ember.asarray(n, copy=True)
    n[0] = 9.0
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_asarray_numpy_dtype_change():
    n = np.arange(3, dtype=np.float64)
    t = ember.asarray(n, dtype=ember.float32)
    assert t.dtype == ember.float32 and t.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="copy=False"):
        ember.asarray(n, dtype=ember.float32, copy=False)


def test_asarray_shares_an_array_module_buffer():
    a = array.array("i", [1, 2, 3])
    t = ember.asarray(a)
    assert t.dtype == ember.int32
    a[2] = 30
    assert t.tolist() == [1, 2, 30]


def test_asarray_of_sequences_and_scalars():
    assert ember.asarray([[1, 2], [3, 4]]).dtype == ember.int64
    assert ember.asarray([1, 2.5]).tolist() == [1.0, 2.5]
    s = ember.asarray(3)
    assert s.dim() == 0 and s.item() == 3
    assert ember.asarray([[1, 2]], dtype=ember.int8).dtype == ember.int8
    assert ember.asarray(np.float32(2.0)).item() == 2.0
    with pytest.raises(ValueError, match="can't alias list"):
        ember.asarray([1, 2], copy=False)


def test_asarray_requires_grad():
    t = ember.asarray([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf
    (t * t).sum().backward()
    assert t.grad.tolist() == [2.0, 4.0]


def test_asarray_follows_the_default_device_for_new_tensors():
    ember.set_default_device("cuda")
    try:
        if not CUDA_AVAILABLE:
            with pytest.raises(RuntimeError, match="cuda"):
                ember.asarray([1.0])
        assert ember.asarray([1.0], device="cpu").device.type == "cpu"
    finally:
        ember.set_default_device(None)


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_asarray_matches_torch():
    for obj in ([1, 2, 3], [[1.5], [2.5]], 4, 2.5, [True, False]):
        e, t = ember.asarray(obj), torch.asarray(obj)
        assert e.tolist() == t.tolist()
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    n = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert ember.asarray(n).tolist() == torch.asarray(n).tolist()
    for bad in (lambda m: m.asarray([1, 2], copy=False),
                lambda m: m.asarray(m.ones(2), dtype=m.float64, copy=False)):
        with pytest.raises(ValueError):
            bad(torch)
        with pytest.raises(ValueError):
            bad(ember)


# ---- frombuffer -----------------------------------------------------------------------------

def test_frombuffer_shares_a_writable_buffer():
    a = array.array("f", [1.0, 2.0, 3.0, 4.0])
    t = ember.frombuffer(a, dtype=ember.float32)
    assert t.tolist() == [1.0, 2.0, 3.0, 4.0]
    a[0] = 10.0
    assert t[0].item() == 10.0
    t[1] = 20.0
    assert a[1] == 20.0


@pytest.mark.parametrize("dtype,np_dtype", [(ember.int8, np.int8), (ember.uint8, np.uint8), (ember.int32, np.int32),
                                            (ember.int64, np.int64), (ember.float16, np.float16),
                                            (ember.float64, np.float64), (ember.bool, np.bool_)])
def test_frombuffer_dtypes_against_numpy(dtype, np_dtype):
    data = bytearray(np.arange(16, dtype=np.uint8).tobytes()) if np_dtype is not np.bool_ else bytearray([0, 1] * 8)
    got = ember.frombuffer(data, dtype=dtype)
    np.testing.assert_array_equal(np_of(got), np.frombuffer(bytes(data), dtype=np_dtype))


def test_frombuffer_count_and_offset():
    data = bytearray(np.arange(6, dtype=np.int32).tobytes())
    got = ember.frombuffer(data, dtype=ember.int32, count=3, offset=8)
    assert got.tolist() == [2, 3, 4]
    assert ember.frombuffer(data, dtype=ember.int32, offset=20).tolist() == [5]


def test_frombuffer_bfloat16_copies_with_a_warning():
    data = bytearray(np.array([1.0, -2.0, 0.5], dtype=np.float32).tobytes())
    halves = bytearray(b"".join(data[i + 2:i + 4] for i in range(0, len(data), 4)))  # bf16 = top 16 bits
    with pytest.warns(UserWarning, match="copy"):
        got = ember.frombuffer(halves, dtype=ember.bfloat16)
    assert got.dtype == ember.bfloat16
    assert got.float().tolist() == [1.0, -2.0, 0.5]


def test_frombuffer_read_only_buffer_copies_with_a_warning():
    with pytest.warns(UserWarning, match="not writable"):
        got = ember.frombuffer(b"\x01\x00\x02\x00\x03\x00\x04\x00", dtype=ember.int32)
    assert got.tolist() == [1 + (2 << 16), 3 + (4 << 16)]


def test_frombuffer_requires_grad():
    t = ember.frombuffer(bytearray(8), dtype=ember.float32, requires_grad=True)
    assert t.requires_grad and t.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("kwargs,match", [
    (dict(count=5), "must not be greater than actual buffer length"),
    (dict(offset=16), "offset"),
    (dict(offset=-1), "offset"),
    (dict(offset=2), "multiple of element size"),
])
def test_frombuffer_bad_count_or_offset(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ember.frombuffer(bytearray(16), dtype=ember.float32, **kwargs)


def test_frombuffer_empty_and_non_buffers():
    with pytest.raises(ValueError, match="must not be 0"):
        ember.frombuffer(bytearray(), dtype=ember.int8)
    with pytest.raises(ValueError, match="buffer protocol"):
        ember.frombuffer([1, 2], dtype=ember.float32)


@pytest.mark.skipif(torch is None, reason="torch not importable")
def test_frombuffer_matches_torch():
    data = np.arange(12, dtype=np.float32).tobytes()
    for kwargs in (dict(), dict(count=4), dict(count=2, offset=12)):
        e = ember.frombuffer(bytearray(data), dtype=ember.float32, **kwargs)
        t = torch.frombuffer(bytearray(data), dtype=torch.float32, **kwargs)
        assert e.tolist() == t.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        halves = bytearray(b"\x80\x3f\x00\x40\x00\xc0")
        assert (ember.frombuffer(halves, dtype=ember.bfloat16).float().tolist()
                == torch.frombuffer(bytearray(halves), dtype=torch.bfloat16).float().tolist())
    for kwargs in (dict(count=20), dict(offset=48), dict(offset=2)):
        with pytest.raises(ValueError):
            torch.frombuffer(bytearray(data), dtype=torch.float32, **kwargs)
        with pytest.raises(ValueError):
            ember.frombuffer(bytearray(data), dtype=ember.float32, **kwargs)
