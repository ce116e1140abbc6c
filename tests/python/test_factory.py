"""Creation functions against numpy: values, shapes, dtype inference like
torch, signatures, and errors."""
import numpy as np
import pytest

import ember
from harness import DEVICE, OpCase, assert_close, make

# The *_like functions as one-input rows of the op table (values do not
# depend on the input's data, only its shape and dtype).
CASES = [
    OpCase("zeros_like", lambda a: ember.zeros_like(a), np.zeros_like, [[(3, 4)], [(0, 2)]],
           dtypes=(np.float32, np.int64, np.bool_), grad=False),
    OpCase("ones_like", lambda a: ember.ones_like(a), np.ones_like, [[(3, 4)], [(2, 1, 3)]],
           dtypes=(np.float32, np.float64, np.int32), grad=False),
    OpCase("full_like", lambda a: ember.full_like(a, 7), lambda a: np.full_like(a, 7), [[(3, 4)], [(5,)]],
           dtypes=(np.float32, np.int64), grad=False),
    OpCase("full_like_float_into_int", lambda a: ember.full_like(a, 2.5), lambda a: np.full_like(a, 2.5),
           [[(2, 2)]], dtypes=(np.float64, np.int64), grad=False),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_like_forward(case):
    for shapes in case.shapes:
        for dtype in case.dtypes:
            a = np.zeros(shapes[0], dtype=dtype)
            assert_close(case.ember_fn(make(a)), case.numpy_fn(a))


@pytest.mark.parametrize("fn, npfn", [(ember.zeros, np.zeros), (ember.ones, np.ones)])
def test_zeros_ones_signatures(fn, npfn):
    for args, shape in [((2, 3), (2, 3)), (((2, 3),), (2, 3)), (([4],), (4,)), (((),), ()), ((0,), (0,))]:
        t = fn(*args)
        assert t.shape == shape and t.dtype == ember.float32
        assert_close(t, npfn(shape, dtype=np.float32))
    assert fn(size=(2, 2)).shape == (2, 2)
    assert fn(2, dtype=ember.int32).dtype == ember.int32
    assert fn(2, dtype=ember.bool).dtype == ember.bool
    assert fn(2, requires_grad=True).requires_grad
    ember.set_default_dtype(ember.float64)
    try:
        assert fn(2).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


def test_empty():
    t = ember.empty(2, 3)
    assert t.shape == (2, 3) and t.dtype == ember.float32
    assert ember.empty((4,), dtype=ember.int64).dtype == ember.int64
    assert ember.empty_like(ember.zeros(2, dtype=ember.float64)).dtype == ember.float64


def test_full_dtype_inference():
    assert ember.full((2, 2), 7).dtype == ember.int64
    assert ember.full((2, 2), 7.0).dtype == ember.float32
    assert ember.full((2, 2), True).dtype == ember.bool
    assert ember.full((2,), 7, dtype=ember.float64).dtype == ember.float64
    assert ember.full((2, 2), 7).tolist() == [[7, 7], [7, 7]]
    assert ember.full([3], -1.5).tolist() == [-1.5, -1.5, -1.5]
    assert ember.full((), 3).shape == ()
    assert ember.full((2,), ember.tensor(4.0)).tolist() == [4.0, 4.0]
    assert ember.full_like(ember.zeros(2, dtype=ember.int32), 3.7).tolist() == [3, 3]
    assert ember.full_like(ember.zeros(2), 3, dtype=ember.int64).dtype == ember.int64


def test_like_zero_dim():
    x = ember.zeros(())
    assert ember.ones_like(x).shape == () and ember.ones_like(x).item() == 1.0
    assert ember.full_like(x, 2).tolist() == 2.0


def test_like_keywords():
    x = ember.zeros(2, 3, dtype=ember.float64, requires_grad=True)
    y = ember.ones_like(x)
    assert y.dtype == ember.float64 and not y.requires_grad and y.shape == (2, 3)
    assert ember.zeros_like(x, dtype=ember.int32).dtype == ember.int32
    assert ember.ones_like(x, requires_grad=True).requires_grad
    assert ember.empty_like(x, device="cpu").device == ember.device("cpu")
    t = ember.zeros(4, 3).t()  # non-contiguous input: result has its shape
    assert ember.ones_like(t).shape == (3, 4)


@pytest.mark.parametrize("args, kwargs, expected, dtype", [
    ((5,), {}, np.arange(5), ember.int64),
    ((2, 7), {}, np.arange(2, 7), ember.int64),
    ((0, 10, 3), {}, np.arange(0, 10, 3), ember.int64),
    ((10, 0, -3), {}, np.arange(10, 0, -3), ember.int64),
    ((0, 1, 0.1), {}, np.arange(0, 1, 0.1), ember.float32),
    ((1, 2.5, 0.5), {}, np.arange(1, 2.5, 0.5), ember.float32),
    ((5.0,), {}, np.arange(5.0), ember.float32),
    ((0, 5), {"dtype": ember.float64}, np.arange(0, 5.0), ember.float64),
    ((3, 3), {}, np.arange(3, 3), ember.int64),
    ((-1.5, 1.5, 0.75), {}, np.arange(-1.5, 1.5, 0.75), ember.float32),
])
def test_arange(args, kwargs, expected, dtype):
    t = ember.arange(*args, **kwargs)
    assert t.dtype == dtype
    assert t.shape == expected.shape
    assert_close(t, expected.astype(np.float64 if dtype.is_floating_point else np.int64), rtol=1e-6, atol=1e-6)


def test_arange_length_like_torch():
    assert ember.arange(0, 1, 0.1).shape == (10,)
    assert ember.arange(1, 1.3, 0.1).shape == (4,)  # ceil(3.0000000000000004), as torch
    assert ember.arange(end=4).tolist() == [0, 1, 2, 3]
    assert ember.arange(1, 4, step=2).tolist() == [1, 3]
    assert ember.arange(start=1, end=3).tolist() == [1, 2]
    big = ember.arange(2**60, 2**60 + 3)
    assert big.tolist() == [2**60, 2**60 + 1, 2**60 + 2]  # exact integers
    assert ember.arange(5, requires_grad=False).dtype == ember.int64
    assert ember.arange(5.0, requires_grad=True).requires_grad


@pytest.mark.parametrize("start, end, steps, dtype", [
    (0, 1, 5, None), (-1, 1, 7, None), (0, 10, 5, ember.int64), (3, -3, 4, ember.float64), (0, 1, 1, None),
    (0, 1, 0, None), (1, 1, 3, None), (0, 100, 6, ember.int32),
])
def test_linspace(start, end, steps, dtype):
    t = ember.linspace(start, end, steps, dtype=dtype)
    assert t.dtype == (dtype or ember.float32)
    assert t.shape == (steps,)
    if dtype is not None and not dtype.is_floating_point:
        # torch: computed in double, truncated toward zero
        ref = np.trunc(np.linspace(start, end, steps)).astype(np.int64)
        assert t.tolist() == ref.tolist()
    else:
        assert_close(t, np.linspace(start, end, steps), rtol=1e-6, atol=1e-6)
    if steps > 1:
        assert t.tolist()[-1] == end and t.tolist()[0] == start


def test_linspace_int_matches_torch():
    assert ember.linspace(0, 10, 5, dtype=ember.int64).tolist() == [0, 2, 5, 7, 10]
    # bounds are truncated to the integer type before stepping
    assert ember.linspace(0.5, 10.7, 5, dtype=ember.int64).tolist() == [0, 2, 5, 7, 10]


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16, ember.uint8, ember.int8, ember.int32])
def test_creation_in_other_dtypes(dtype):
    assert ember.zeros(2, 3, dtype=dtype).float().tolist() == [[0.0] * 3] * 2
    assert ember.ones(4, dtype=dtype).float().tolist() == [1.0] * 4
    assert ember.full((2,), 3, dtype=dtype).float().tolist() == [3.0, 3.0]
    assert ember.arange(4, dtype=dtype).float().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert ember.linspace(0, 6, 4, dtype=dtype).float().tolist() == [0.0, 2.0, 4.0, 6.0]
    assert ember.eye(2, dtype=dtype).float().tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_eye():
    assert_close(ember.eye(3), np.eye(3, dtype=np.float32))
    assert_close(ember.eye(2, 4), np.eye(2, 4, dtype=np.float32))
    assert_close(ember.eye(4, 2, dtype=ember.int64), np.eye(4, 2, dtype=np.int64))
    assert ember.eye(0).shape == (0, 0)
    assert ember.eye(3, dtype=ember.bool).dtype == ember.bool
    assert ember.eye(2, requires_grad=True).requires_grad


@pytest.mark.parametrize("fn, name", [
    (lambda: ember.zeros(-1, 3), "zeros"),
    (lambda: ember.ones(2, -5), "ones"),
    (lambda: ember.empty(-2), "empty"),
    (lambda: ember.full((-1,), 2), "full"),
    (lambda: ember.arange(0, 1, 0), "arange"),
    (lambda: ember.arange(1, 0, 1), "arange"),
    (lambda: ember.arange(0, float("inf")), "arange"),
    (lambda: ember.linspace(0, 1, -1), "linspace"),
    (lambda: ember.eye(-1), "eye"),
    (lambda: ember.eye(2, -1), "eye"),
])
def test_errors_are_runtime_errors_naming_the_op(fn, name):
    with pytest.raises(RuntimeError, match=name):
        fn()


def test_type_errors():
    with pytest.raises(TypeError, match="zeros"):
        ember.zeros()
    with pytest.raises(TypeError, match="zeros"):
        ember.zeros(2.5)
    with pytest.raises(TypeError, match="full"):
        ember.full((2,), "x")
    with pytest.raises(TypeError, match="arange"):
        ember.arange()
    with pytest.raises(RuntimeError, match="floating point"):
        ember.zeros(2, dtype=ember.int64, requires_grad=True)


# ---- a Python number that does not fit the integer dtype it fills is refused (torch's rule), not wrapped

_FILLS = {
    "full": lambda v, dt: ember.full((2,), v, dtype=dt, device=DEVICE),
    "fill_": lambda v, dt: ember.zeros(2, dtype=dt, device=DEVICE).fill_(v),
    "tensor": lambda v, dt: ember.tensor([v, 0], dtype=dt, device=DEVICE),
    "masked_fill_": lambda v, dt: ember.zeros(2, dtype=dt, device=DEVICE).masked_fill_(
        ember.ones(2, dtype=ember.bool, device=DEVICE), v),
    "masked_fill": lambda v, dt: ember.masked_fill(ember.zeros(2, dtype=dt, device=DEVICE),
                                                   ember.ones(2, dtype=ember.bool, device=DEVICE), v),
    "setitem": lambda v, dt: ember.zeros(2, dtype=dt, device=DEVICE).__setitem__(slice(None), v),
    "scatter": lambda v, dt: ember.zeros(2, dtype=dt, device=DEVICE).scatter(
        0, ember.tensor([0, 1], device=DEVICE), value=v),
    "scatter_": lambda v, dt: ember.zeros(2, dtype=dt, device=DEVICE).scatter_(
        0, ember.tensor([0, 1], device=DEVICE), value=v),
}


@pytest.mark.parametrize("op", sorted(_FILLS))
@pytest.mark.parametrize("value,dtype", [(300, ember.uint8), (-256, ember.uint8), (-1.0, ember.uint8),
                                         (256.0, ember.uint8), (128, ember.int8), (-129, ember.int8),
                                         (2 ** 31, ember.int32), (float("nan"), ember.int64),
                                         (float("inf"), ember.int32), (9.3e18, ember.int64)])
def test_fill_values_out_of_an_integer_range_are_refused(op, value, dtype):
    with pytest.raises(RuntimeError, match="cannot be converted to type .* without overflow"):
        _FILLS[op](value, dtype)


@pytest.mark.parametrize("op", sorted(_FILLS))
@pytest.mark.parametrize("value,dtype,expected", [(-1, ember.uint8, 255), (-255, ember.uint8, 1),
                                                  (255.9, ember.uint8, 255), (-128, ember.int8, -128),
                                                  (-2 ** 31, ember.int32, -2 ** 31),
                                                  (2 ** 63 - 1, ember.int64, 2 ** 63 - 1), (5, ember.bool, True),
                                                  (1e6, ember.float16, float("inf"))])
def test_fill_values_inside_the_range_are_written(op, value, dtype, expected):
    # Unsigned dtypes take negative integers down to -max as two's complement, as torch does;
    # floating dtypes round out-of-range values to inf.
    if op == "setitem":  # __setitem__ returns None
        t = ember.zeros(2, dtype=dtype, device=DEVICE)
        t[:] = value
    else:
        t = _FILLS[op](value, dtype)
    if op == "tensor":
        assert t.tolist()[0] == expected
    else:
        assert t.tolist() == [expected, expected]


def test_fill_range_error_names_the_op_and_value():
    with pytest.raises(RuntimeError, match=r"^full: value 300 cannot be converted to type uint8 without overflow"):
        ember.full((2,), 300, dtype=ember.uint8)
    with pytest.raises(RuntimeError, match=r"fill_: value nan cannot be converted to type int64"):
        ember.zeros(1, dtype=ember.int64).fill_(float("nan"))
    with pytest.raises(RuntimeError, match=r"^index_fill_: value 300 cannot be converted to type uint8"):
        ember.zeros(2, dtype=ember.uint8).index_fill_(0, ember.tensor([0]), 300)


def test_arithmetic_with_an_out_of_range_number_still_wraps():
    # torch refuses fills, not arithmetic: uint8 + 300 wraps as a uint8 sum.
    assert (ember.zeros(2, dtype=ember.uint8, device=DEVICE) + 300).tolist() == [44, 44]
