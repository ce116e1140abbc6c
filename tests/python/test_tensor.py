"""The Tensor object and its numpy bridge: construction from Python data,
memory sharing with numpy, dtypes and promotion, devices, conversions and
the structural queries (shape, strides, contiguity)."""
import numpy as np
import pytest

import ember
from harness import assert_close

ALL_DTYPES = [ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int8, ember.uint8,
              ember.int32, ember.int64, ember.bool]
NUMPY_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64, np.bool_]


# ---- ember.tensor from Python data

@pytest.mark.parametrize("data, shape, dtype", [
    (1.5, (), ember.float32),
    (3, (), ember.int64),
    (True, (), ember.bool),
    ([1, 2, 3], (3,), ember.int64),
    ([1.0, 2], (2,), ember.float32),
    ([True, False], (2,), ember.bool),
    ([True, 2], (2,), ember.int64),
    ([True, 1, 2.5], (3,), ember.float32),
    ([[1, 2], [3, 4], [5, 6]], (3, 2), ember.int64),
    ([[[1.0]], [[2.0]]], (2, 1, 1), ember.float32),
    ([], (0,), ember.float32),
    ([[], []], (2, 0), ember.float32),
    ((1, 2), (2,), ember.int64),
])
def test_tensor_infers_shape_and_dtype(data, shape, dtype):
    t = ember.tensor(data)
    assert t.shape == shape
    assert t.dtype == dtype
    if shape:
        assert t.tolist() == (list(data) if not isinstance(data, tuple) else list(data)) or t.numel() == 0


def test_tensor_values():
    assert ember.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert ember.tensor([True, 2]).tolist() == [1, 2]
    assert ember.tensor(2.5).item() == 2.5
    assert ember.tensor([0.1]).tolist()[0] == pytest.approx(0.1, rel=1e-6)


def test_tensor_from_scalars_of_other_kinds():
    assert ember.tensor([ember.tensor(1.0), ember.tensor(2.0)]).dtype == ember.float32
    assert ember.tensor([ember.tensor(1), 2]).tolist() == [1, 2]
    assert ember.tensor(np.float64(2.0)).dtype == ember.float64  # numpy scalars keep their dtype
    assert ember.tensor(np.int32(2)).dtype == ember.int32
    assert ember.tensor([np.bool_(True), False]).dtype == ember.bool
    assert ember.tensor([np.int64(3), 1]).dtype == ember.int64


@pytest.mark.parametrize("data", [[[1, 2], [3]], [[1], 2], [[[1, 2]], [[1]]]])
def test_ragged_raises_value_error(data):
    with pytest.raises((ValueError, TypeError)):
        ember.tensor(data)


def test_ragged_message():
    with pytest.raises(ValueError, match="tensor: expected sequence of length 2 at dim 1"):
        ember.tensor([[1, 2], [3]])


def test_tensor_bad_data():
    with pytest.raises(TypeError, match="tensor"):
        ember.tensor(["a"])
    with pytest.raises(TypeError):
        ember.tensor(None)
    with pytest.raises(RuntimeError, match="int64"):
        ember.tensor([2 ** 63])
    with pytest.raises(ValueError, match="0-d"):
        ember.tensor([ember.ones(2)])


def test_tensor_dtype_and_device_args():
    t = ember.tensor([1, 2], dtype=ember.float64)
    assert t.dtype == ember.float64 and t.tolist() == [1.0, 2.0]
    assert ember.tensor([1.7, -1.7], dtype=ember.int32).tolist() == [1, -1]
    assert ember.tensor([1, 2], dtype=np.float16).dtype == ember.float16
    assert ember.tensor([1, 2], dtype=float).dtype == ember.float32
    assert ember.tensor([1, 2], dtype=int).dtype == ember.int64
    assert ember.tensor([0, 2], dtype=bool).tolist() == [False, True]
    assert ember.tensor([1], device="cpu").device == ember.device("cpu")
    assert ember.tensor([1], device=ember.device("cpu")).device.type == "cpu"
    with pytest.raises(TypeError, match="dtype"):
        ember.tensor([1], dtype="float32x")
    with pytest.raises(ValueError, match="device"):
        ember.tensor([1], device="tpu")


def test_tensor_copies_tensor_input():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor(a)
    assert not b.requires_grad
    with ember.no_grad():
        a.mul_(2)
    assert b.tolist() == [1.0, 2.0]


# ---- numpy bridge

def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ember.from_numpy(a)
    assert t.dtype == ember.float32 and t.shape == (2, 3)
    t.mul_(ember.tensor(2.0))
    assert a[1, 2] == 10.0
    a[0, 0] = -7
    assert t.tolist()[0][0] == -7.0


def test_from_numpy_keeps_array_alive():
    t = ember.from_numpy(np.arange(4, dtype=np.int64))
    import gc
    gc.collect()
    assert t.tolist() == [0, 1, 2, 3]


def test_numpy_shares_memory_both_ways():
    t = ember.zeros(2, 2)
    n = t.numpy()
    n[1, 1] = 5
    assert t.tolist() == [[0.0, 0.0], [0.0, 5.0]]
    t.add_(ember.tensor(1.0))
    assert n[0, 0] == 1.0
    del t
    assert n[1, 1] == 6.0  # the array keeps the memory alive


def test_numpy_of_views_keeps_strides():
    t = ember.tensor(np.arange(6.0).reshape(2, 3))
    n = t.t().numpy()
    np.testing.assert_array_equal(n, np.arange(6.0).reshape(2, 3).T)
    e = ember.ones(1, 3).expand(4, 3).numpy()
    assert e.shape == (4, 3) and e.strides[0] == 0
    assert ember.tensor(3.0).numpy().shape == ()
    assert ember.zeros(0, 3).numpy().shape == (0, 3)


def test_numpy_on_requires_grad_tensor():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(x)  # __array__ refuses too, as torch's does


def test_tensor_from_numpy_array_copies():
    a = np.arange(3, dtype=np.float64)
    t = ember.tensor(a)
    a[0] = 100
    assert t.tolist() == [0.0, 1.0, 2.0]
    assert t.dtype == ember.float64


@pytest.mark.parametrize("make_view", [
    lambda: np.arange(10.0)[::2],
    lambda: np.arange(12).reshape(3, 4).T,
    lambda: np.arange(24, dtype=np.float32).reshape(2, 3, 4)[:, 1:, ::3],
    lambda: np.arange(12, dtype=np.int32).reshape(3, 4)[:, 1::2],
])
def test_non_contiguous_numpy_arrays(make_view):
    a = make_view()
    assert not a.flags.c_contiguous
    np.testing.assert_array_equal(ember.tensor(a).numpy(), a)
    shared = ember.from_numpy(a)
    np.testing.assert_array_equal(shared.numpy(), a)
    assert shared.tolist() == a.tolist()


def _misaligned_copy(a):
    """`a`'s values in a buffer that starts one byte past an aligned address."""
    raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
    out = raw[1:].view(a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.float16, np.int32, np.int64,
                                      np.complex64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_from_numpy_shares_misaligned_arrays_and_computes_on_them(np_dtype):
    # As in PyTorch, a misaligned array (a view into a byte buffer) is shared,
    # not refused or copied; the kernels must then read and write it correctly.
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((17, 33)) * 8).astype(np_dtype)
    b = (rng.standard_normal((17, 33)) * 8).astype(np_dtype)
    ua = _misaligned_copy(a)
    shared, x, y = ember.from_numpy(ua), ember.from_numpy(a), ember.from_numpy(b)
    ops = [lambda t: t + y, lambda t: t.sum(0), lambda t: t.sum(1), lambda t: t.t().contiguous(),
           lambda t: t @ y.t(), lambda t: t.cumsum(1), lambda t: ember.cat([t, y], 1),
           lambda t: t.repeat_interleave(3, 1), lambda t: t[ember.tensor([4, 0, 9])]]
    if not np.issubdtype(np_dtype, np.complexfloating):
        ops += [lambda t: t.sort(1)[0], lambda t: t.amax(1), lambda t: t.to(ember.float64)]
    for op in ops:
        np.testing.assert_allclose(op(shared).numpy(), op(x).numpy(), rtol=1e-3, atol=1e-3)
    shared.mul_(ember.tensor(2, dtype=shared.dtype))  # written through to the array
    np.testing.assert_allclose(ua, a * 2, rtol=1e-3)


def test_from_numpy_rejects():
    with pytest.raises(TypeError, match="np.ndarray"):
        ember.from_numpy([1, 2])
    with pytest.raises(ValueError, match="strides"):
        ember.from_numpy(np.arange(4.0)[::-1])
    with pytest.raises(TypeError, match="uint16"):
        ember.from_numpy(np.ones(2, dtype=np.uint16))
    with pytest.raises(TypeError, match="complex256"):
        ember.from_numpy(np.ones(2, dtype=np.clongdouble))


@pytest.mark.parametrize("np_dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_dtype_round_trip(np_dtype):
    a = (np.arange(6) % 3).astype(np_dtype).reshape(2, 3)
    for t in (ember.from_numpy(a), ember.tensor(a), ember.as_tensor(a)):
        assert str(t.dtype) == "ember." + np.dtype(np_dtype).name
        back = t.numpy()
        assert back.dtype == a.dtype
        np.testing.assert_array_equal(back, a)


def test_bfloat16_to_numpy_raises_type_error():
    t = ember.tensor([1.5, 2.0], dtype=ember.bfloat16)
    with pytest.raises(TypeError, match="BFloat16"):
        t.numpy()
    assert t.float().numpy().tolist() == [1.5, 2.0]
    assert t.tolist() == [1.5, 2.0]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_through_to(dtype):
    t = ember.tensor([0, 1, 2]).to(dtype)
    assert t.dtype == dtype
    expected = [False, True, True] if dtype == ember.bool else [0, 1, 2]
    assert t.tolist() == expected
    assert t.to(ember.int64).tolist() == [int(v) for v in expected]


# ---- Python protocol

def test_item_and_python_conversions():
    assert ember.tensor(3).item() == 3 and isinstance(ember.tensor(3).item(), int)
    assert isinstance(ember.tensor(2.5).item(), float)
    assert ember.tensor(True).item() is True
    assert ember.tensor([[4.0]]).item() == 4.0
    with pytest.raises(RuntimeError, match="2 elements"):
        ember.tensor([1, 2]).item()
    assert float(ember.tensor(3)) == 3.0
    assert int(ember.tensor(2.7)) == 2
    assert int(ember.tensor([5])) == 5
    assert [10, 20, 30][ember.tensor(1)] == 20
    with pytest.raises(TypeError, match="index"):
        [10, 20][ember.tensor(1.0)]


def test_len_bool_and_iteration():
    assert len(ember.zeros(4, 2)) == 4
    with pytest.raises(TypeError, match="0-d"):
        len(ember.tensor(1.0))
    assert bool(ember.tensor([3])) is True and bool(ember.tensor(0.0)) is False
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="no values"):
        bool(ember.tensor([]))
    with pytest.raises(TypeError, match="0-d"):
        iter(ember.tensor(1.0))


@pytest.mark.skipif(not hasattr(ember.Tensor, "__getitem__"), reason="iteration needs indexing (index family)")
def test_iteration_yields_rows():
    rows = list(ember.tensor([[1, 2], [3, 4]]))
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]


def test_tolist_dtypes():
    assert ember.tensor([1.5], dtype=ember.float16).tolist() == [1.5]
    assert ember.tensor([[True]]).tolist() == [[True]]
    assert ember.tensor(7, dtype=ember.uint8).tolist() == 7
    assert ember.tensor([-3], dtype=ember.int8).tolist() == [-3]


# ---- dtypes and devices

def test_dtype_objects():
    assert repr(ember.float32) == "ember.float32"
    assert str(ember.bfloat16) == "ember.bfloat16"
    assert ember.float32 == ember.float and ember.float64 == ember.double
    assert ember.int64 == ember.long and ember.int32 == ember.int and ember.float16 == ember.half
    assert ember.float32 != ember.float64
    assert len({ember.float32, ember.float, ember.int64}) == 2
    assert ember.float32.is_floating_point and not ember.int32.is_floating_point
    assert ember.float64.itemsize == 8 and ember.bool.itemsize == 1
    assert not ember.uint8.is_signed and ember.int8.is_signed
    assert ember.get_default_dtype() == ember.float32


# PyTorch's promotion rules (torch.promote_types). ember has no int16, so
# uint8+int8 widens to the next signed type ember has.
PROMOTIONS = [
    (ember.bool, ember.bool, ember.bool),
    (ember.bool, ember.uint8, ember.uint8),
    (ember.bool, ember.int8, ember.int8),
    (ember.bool, ember.float16, ember.float16),
    (ember.uint8, ember.int8, getattr(ember, "int16", ember.int32)),
    (ember.uint8, ember.int32, ember.int32),
    (ember.int8, ember.int64, ember.int64),
    (ember.int32, ember.int64, ember.int64),
    (ember.int64, ember.float16, ember.float16),
    (ember.int64, ember.bfloat16, ember.bfloat16),
    (ember.uint8, ember.float32, ember.float32),
    (ember.float16, ember.bfloat16, ember.float32),
    (ember.float16, ember.float32, ember.float32),
    (ember.bfloat16, ember.float64, ember.float64),
    (ember.float32, ember.float64, ember.float64),
]


@pytest.mark.parametrize("a, b, expected", PROMOTIONS, ids=lambda d: str(d))
def test_promote_types(a, b, expected):
    assert ember.promote_types(a, b) == expected
    assert ember.promote_types(b, a) == expected


def test_device_objects():
    cpu = ember.device("cpu")
    assert cpu.type == "cpu" and cpu.index is None and str(cpu) == "cpu"
    assert repr(cpu) == "device(type='cpu')"
    assert cpu == "cpu" and cpu == ember.device(cpu)
    c1 = ember.device("cuda:1")
    assert c1.type == "cuda" and c1.index == 1 and c1 == ember.device("cuda", 1)
    assert repr(c1) == "device(type='cuda', index=1)"
    assert len({ember.device("cpu"), ember.device("cpu")}) == 1
    with pytest.raises(ValueError, match="device"):
        ember.device("tpu")
    assert ember.ones(1).device == cpu and ember.ones(1).is_cpu and not ember.ones(1).is_cuda


# ---- conversions

def test_to_dtype_device_and_other():
    t = ember.tensor([1.7, -2.2])
    assert t.to(ember.int64).tolist() == [1, -2]
    assert t.to(dtype=ember.float64).dtype == ember.float64
    assert t.to("cpu") is not None and t.to(device="cpu").device == ember.device("cpu")
    assert t.to(ember.device("cpu"), ember.float64).dtype == ember.float64
    other = ember.zeros(1, dtype=ember.int32)
    assert t.to(other).dtype == ember.int32
    c = t.to(ember.float32, copy=True)
    c.mul_(ember.tensor(0.0))
    assert t.tolist()[0] == pytest.approx(1.7)
    same = t.to(ember.float32)
    same.mul_(ember.tensor(1.0))  # a no-op conversion returns the same memory
    assert same.data_ptr() == t.data_ptr()
    with pytest.raises(TypeError, match="unexpected keyword"):
        t.to(dtyp=ember.float64)


def test_to_keeps_autograd():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x.to(ember.float64)
    assert y.requires_grad
    (y * y).sum().backward()
    assert x.grad.dtype == ember.float32
    assert_close(x.grad, [2.0, 4.0])


@pytest.mark.skipif(ember._C._build_info()["cuda"] == "ON",
                    reason="checks the CPU-only build (test_cuda.py checks a CUDA build without a GPU)")
def test_cuda_on_cpu_build_raises_clearly():
    t = ember.ones(2)
    try:
        t.cuda()
    except RuntimeError as e:
        assert "ember was built without CUDA support" in str(e) or "CUDA" in str(e)
    else:  # a CUDA build with a GPU
        return
    with pytest.raises(RuntimeError, match="ember was built without CUDA support"):
        t.to("cuda")
    with pytest.raises(RuntimeError, match="ember was built without CUDA support"):
        ember.tensor([1.0], device="cuda")


# ---- structure

def test_shape_size_stride_dim_numel():
    t = ember.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.size() == (2, 3, 4)
    assert t.size(1) == 3 and t.size(-1) == 4
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12 and t.stride(-1) == 1
    assert t.dim() == 3 and t.ndim == 3 and t.numel() == 24 and t.nelement() == 24
    assert t.is_contiguous()
    assert t.element_size() == 4 and t.nbytes == 96
    with pytest.raises(IndexError, match="size"):
        t.size(3)
    with pytest.raises(IndexError, match="stride"):
        t.stride(-4)
    s = ember.tensor(5.0)
    assert s.shape == () and s.dim() == 0 and s.numel() == 1 and s.stride() == ()
    e = ember.zeros(0, 3)
    assert e.numel() == 0 and e.shape == (0, 3)


def test_contiguity_of_views():
    t = ember.zeros(2, 3)
    tt = t.t()
    assert not tt.is_contiguous() and tt.stride() == (1, 3)
    c = tt.contiguous()
    assert c.is_contiguous() and c.stride() == (2, 1)
    assert ember.zeros(1, 3).expand(4, 3).stride() == (0, 1)
    assert ember.zeros(3, 1).t().is_contiguous()  # size-1 dims do not matter
    assert ember.zeros(0, 3).t().is_contiguous()  # so do all dims of an empty tensor, as in PyTorch
    assert ember.from_numpy(np.zeros((2, 0), np.float32).copy()).is_contiguous()


def test_shape_is_an_ember_size():
    x = ember.zeros(2, 3)
    assert isinstance(x.shape, ember.Size) and isinstance(x.size(), ember.Size)
    assert x.shape == (2, 3) and x.size(-1) == 3
    assert repr(x.shape) == "ember.Size([2, 3])"
    assert x.shape.numel() == 6
    assert ember.zeros(x.shape).shape == (2, 3)


def test_sizes_that_overflow_int64_raise_instead_of_crashing():
    with pytest.raises(RuntimeError, match="int64"):
        ember.zeros(2**32, 2**32)
    with pytest.raises(RuntimeError):
        ember.zeros(2**62)
    with pytest.raises(RuntimeError, match="int64"):
        ember.zeros(1).expand(2**62, 4)
    assert ember.zeros(2**40, 0).numel() == 0


def test_python_ints_beyond_int64_name_the_op():
    with pytest.raises(RuntimeError, match=r"full: value .* out of range for int64"):
        ember.full((2,), 2**70)
    with pytest.raises(RuntimeError, match="out of range for int64"):
        ember.ones(2, dtype=ember.int64) + 2**64


def test_numpy_operands_stay_tensors():
    x = ember.ones(3, requires_grad=True)
    y = np.float64(2.0) * x
    assert isinstance(y, ember.Tensor) and y.requires_grad
    z = ember.ones(2) + np.array([1.0, 2.0], dtype=np.float32)
    assert isinstance(z, ember.Tensor) and z.tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(x)


def test_fill_with_a_tensor_value():
    x = ember.zeros(3)
    x.fill_(ember.tensor(2.5))
    assert x.tolist() == [2.5] * 3
    with pytest.raises(RuntimeError, match="fill_: only supports a 0-dimension value tensor"):
        x.fill_(ember.ones(2))


def test_copy_type_as_and_conversions():
    x = ember.tensor([[1.5, -2.0], [3.25, 4.0]])
    dst = ember.zeros(2, 2, dtype=ember.float64)
    dst.copy_(x.t())  # non-contiguous source, dtype cast
    assert dst.tolist() == [[1.5, 3.25], [-2.0, 4.0]] and dst.dtype == ember.float64
    row = ember.zeros(3, 2)
    row.copy_(ember.tensor([7.0, 8.0]))  # broadcast source
    assert row.tolist() == [[7.0, 8.0]] * 3
    assert x.type_as(ember.ones(1, dtype=ember.int32)).dtype == ember.int32
    assert x.long().tolist() == [[1, -2], [3, 4]] and x.long().dtype == ember.int64
    a = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: ember.zeros(2, 2, dtype=ember.float64).copy_(t) * 3, (a,))


def test_cuda_tensor_on_a_cpu_build_says_so():
    if ember._C._build_info()["cuda"] == "ON":
        pytest.skip("checks the CPU-only build (test_cuda.py checks a CUDA build without a GPU)")
    assert ember.cuda.device_count() == 0
    with pytest.raises(RuntimeError, match="without CUDA support.*device='cpu'"):
        ember.zeros(2, device="cuda")


# ---- pickle and copy.deepcopy

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_pickle_round_trip_keeps_values_and_dtype(dtype):
    import pickle
    src = ember.tensor([[1.5, -2.0, 0.0], [3.25, 1.0, 7.0]]).to(dtype)
    for t in (src, src.t(), src[:, ::2], src[0, 1], src[:0]):  # views, 0-d and empty too
        back = pickle.loads(pickle.dumps(t))
        assert type(back) is ember.Tensor
        assert back.dtype == dtype and back.shape == t.shape and back.is_contiguous()
        assert_close(back.float().numpy(), t.float().numpy(), 0, 0)


def test_pickle_keeps_requires_grad_and_refuses_non_leaves():
    import pickle
    leaf = ember.randn(3).requires_grad_(True)
    back = pickle.loads(pickle.dumps(leaf))
    assert back.requires_grad and back.is_leaf and back.grad_fn is None
    with ember.no_grad():
        back.add_(1)  # new storage: the original is untouched
    assert_close(back.detach().numpy(), leaf.detach().numpy() + 1, 1e-6, 1e-6)
    with pytest.raises(RuntimeError, match="non-leaf"):
        pickle.dumps(leaf * 2)
    assert pickle.loads(pickle.dumps((leaf * 2).detach())).requires_grad is False


def test_deepcopy_copies_storage_and_grad():
    import copy
    t = ember.randn(2, 3).requires_grad_(True)
    t.sum().backward()
    c = copy.deepcopy(t)
    assert c.requires_grad and c.is_leaf and c.grad is not None
    assert_close(c.grad.numpy(), np.ones((2, 3)), 0, 0)
    with ember.no_grad():
        c.add_(1)
        c.grad.add_(1)
    assert_close(t.grad.numpy(), np.ones((2, 3)), 0, 0)
    assert_close(c.detach().numpy(), t.detach().numpy() + 1, 1e-6, 1e-6)
    pair = copy.deepcopy([t, t])  # the memo keeps shared references shared
    assert pair[0] is pair[1]
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(t * 2)


def test_parameters_stay_parameters_through_pickle_and_deepcopy():
    import copy
    import pickle
    p = ember.nn.Parameter(ember.randn(4))
    frozen = ember.nn.Parameter(ember.randn(2), requires_grad=False)
    for q, orig in ((pickle.loads(pickle.dumps(p)), p), (copy.deepcopy(p), p),
                    (pickle.loads(pickle.dumps(frozen)), frozen)):
        assert type(q) is ember.nn.Parameter
        assert q.requires_grad == orig.requires_grad
        assert_close(q.detach().numpy(), orig.detach().numpy(), 0, 0)


# ---- API surface as torch's (a sweep of idioms from torch scripts)

@pytest.mark.parametrize("values, expected", [
    ([np.float64(0.1), np.float64(0.2)], ember.float64), ([np.float64(1), 2], ember.float64),
    ([np.int32(1), 2], ember.int64), ([np.float16(1.0)], ember.float16), ([np.float16(1.0), 2.0], ember.float32),
    ([True, np.int32(3)], ember.int32), ([1, 2], ember.int64), ([1.5, True], ember.float32),
    ([np.float32(1.0), 1j], ember.complex64)])
def test_tensor_of_a_list_promotes_its_numbers_dtypes(values, expected):
    # Numpy scalars (and 0-d tensors) in a list keep their dtype in the promotion, as in torch:
    # a list of numpy float64 values is float64, not the default float32.
    assert ember.tensor(values).dtype == expected
    assert ember.tensor([ember.tensor(1.0, dtype=ember.float64), 1]).dtype == ember.float64
    np.testing.assert_array_equal(ember.tensor([np.float64(0.1), np.float64(0.2)]).numpy(), [0.1, 0.2])


def test_big_endian_and_read_only_arrays():
    # tensor() converts a big-endian array to the machine's order (it read the bytes as they were);
    # from_numpy, which shares memory, refuses it; a read-only array is copied, with a warning.
    for dtype in (">i4", ">f4", ">f8"):
        np.testing.assert_array_equal(ember.tensor(np.arange(3, dtype=dtype)).numpy(), [0, 1, 2])
    with pytest.raises(ValueError, match="byte order"):
        ember.from_numpy(np.arange(3, dtype=">i4"))
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable, so the tensor holds a copy"):
        t = ember.from_numpy(a)
    t[0] = 5.0
    assert a[0] == 0.0 and t[0].item() == 5.0


def test_size_slices_and_sums_stay_sizes_and_squeeze_takes_dims():
    x = ember.zeros(2, 3, 4)
    assert isinstance(x.shape[1:], ember.Size) and x.shape[1:].numel() == 12
    assert x.shape + (5,) == (2, 3, 4, 5) and isinstance(x.shape + (5,), ember.Size)
    assert isinstance((1,) + x.shape, ember.Size) and isinstance(x.shape[0], int)
    y = ember.zeros(1, 3, 1, 2, 1)
    assert y.squeeze((0, 2)).shape == (3, 2, 1) and ember.squeeze(y, dim=[0, -1]).shape == (3, 1, 2)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        y.squeeze((0, 0))
    assert ember.zeros_like(x, memory_format=ember.preserve_format).shape == x.shape
    assert ember.randn_like(x, memory_format=ember.preserve_format, layout=ember.strided).shape == x.shape
    np.testing.assert_array_equal(ember.ones(2, requires_grad=True).numpy(force=True), [1.0, 1.0])


def test_matmul_with_a_numpy_array_and_complex_and_dense_conversions():
    a = ember.ones(2, 3)
    out = a @ np.ones((3, 2))  # torch's answer: a float64 tensor (numpy computed it before, as an ndarray)
    assert isinstance(out, ember.Tensor) and out.dtype == ember.float64
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 3.0))
    assert (a @ np.ones((3, 2), dtype=np.float32)).dtype == ember.float32
    with pytest.raises(TypeError):
        a @ 2
    assert a.cfloat().dtype == ember.complex64 and a.cdouble().dtype == ember.complex128
    assert a.to_dense().dtype == ember.float32 and a.to_dense(ember.float64).dtype == ember.float64
