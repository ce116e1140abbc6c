"""softmax / log_softmax: forward against numpy on every dim, dtype=,
numerical stability, non-contiguous inputs, gradcheck (and double backward)
and errors."""
import math

import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, parametrize_cases, random_array, table_tests, to_numpy

F = (np.float32, np.float64)


def np_softmax(a, axis):
    a = a.astype(np.float64)
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def np_log_softmax(a, axis):
    a = a.astype(np.float64)
    m = np.max(a, axis=axis, keepdims=True)
    return a - m - np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))


SHAPES = [[(3, 5)], [(2, 3, 4)], [(6,)]]

CASES = [
    OpCase("softmax_last", lambda x: x.softmax(-1), lambda a: np_softmax(a, -1), SHAPES, dtypes=F),
    OpCase("softmax_first", lambda x: ember.softmax(x, 0), lambda a: np_softmax(a, 0), SHAPES, dtypes=F),
    OpCase("softmax_middle", lambda x: ember.softmax(x, 1), lambda a: np_softmax(a, 1), [[(2, 3, 4)], [(2, 5, 1)]],
           dtypes=F),
    OpCase("log_softmax_last", lambda x: x.log_softmax(-1), lambda a: np_log_softmax(a, -1), SHAPES, dtypes=F),
    OpCase("log_softmax_first", lambda x: ember.log_softmax(x, 0), lambda a: np_log_softmax(a, 0), SHAPES,
           dtypes=F),
    OpCase("log_softmax_middle", lambda x: x.log_softmax(-2), lambda a: np_log_softmax(a, -2), [[(2, 3, 4)]],
           dtypes=F),
    OpCase("softmax_dtype", lambda x: x.softmax(1, dtype=ember.float64), lambda a: np_softmax(a, 1), [[(3, 4)]],
           rtol=1e-12, atol=1e-14),
    OpCase("log_softmax_dtype", lambda x: ember.log_softmax(x, 1, dtype=ember.float64),
           lambda a: np_log_softmax(a, 1), [[(3, 4)]], rtol=1e-12, atol=1e-14),
]


# forward against numpy for every row; float64 gradcheck for differentiable rows
test_forward, test_gradcheck = table_tests(CASES)


@parametrize_cases(CASES)
def test_noncontiguous(case):
    a = random_array((4, 3, 5))
    # Transposed storage and a stride-0 expanded input.
    t = make(np.ascontiguousarray(np.swapaxes(a, 0, 2))).permute(2, 1, 0)
    assert not t.is_contiguous()
    assert_close(case.ember_fn(t), case.numpy_fn(a), 1e-5, 1e-6, msg=f"{case.name} permuted")
    row = random_array((1, 3, 5))
    e = make(row).expand(4, 3, 5)
    assert_close(case.ember_fn(e), case.numpy_fn(np.broadcast_to(row, (4, 3, 5)).copy()), 1e-5, 1e-6,
                 msg=f"{case.name} expanded")


def test_wide_inner_dims_and_many_rows():
    # inner > one column chunk (256) and enough rows for several threads.
    a = random_array((2, 7, 300))
    assert_close(ember.softmax(make(a), 1), np_softmax(a, 1), 1e-5, 1e-6)
    assert_close(ember.log_softmax(make(a), 0), np_log_softmax(a, 0), 1e-5, 1e-5)
    b = random_array((4096, 33))
    assert_close(make(b).softmax(-1), np_softmax(b, -1), 1e-5, 1e-6)
    assert_close(make(b).log_softmax(1), np_log_softmax(b, 1), 1e-5, 1e-5)


def test_numerically_stable():
    x = ember.tensor([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -math.inf]])
    shifted = np.array([[0.0, 1.0, 2.0], [0.0, -1.0, -math.inf]])
    assert_close(x.softmax(1), np_softmax(shifted, 1), 1e-6, 1e-7)
    ls = x.log_softmax(1).tolist()
    assert ls[1][2] == -math.inf
    # float32 keeps full precision: (x - max) - log(sum), not x - (max + log(sum)).
    assert_close(np.array(ls[0]), np_log_softmax(np.array([0.0, 1.0, 2.0]), 0), 1e-6, 1e-6)
    assert_close(np.array(ls[1][:2]), np_log_softmax(np.array([0.0, -1.0]), 0), 1e-6, 1e-6)
    assert not np.isnan(x.softmax(1).numpy()).any()


def test_nan_propagates_to_its_slice():
    x = ember.tensor([[1.0, math.nan], [1.0, 2.0]])
    y = x.softmax(1).numpy()
    assert np.isnan(y[0]).all() and not np.isnan(y[1]).any()


def test_zero_dim_and_empty():
    assert ember.tensor(3.0).softmax(0).item() == 1.0
    assert ember.tensor(3.0).log_softmax(-1).item() == 0.0
    assert ember.zeros(0, 4).softmax(1).shape == (0, 4)
    assert ember.zeros(3, 0).log_softmax(1).shape == (3, 0)


def test_half_keeps_dtype():
    x = ember.tensor([[1.0, 2.0, 3.0]], dtype=ember.float16)
    y = x.softmax(1)
    assert y.dtype == ember.float16
    assert_close(y.float(), np_softmax(np.array([[1.0, 2.0, 3.0]]), 1), 1e-3, 1e-3)


def test_dtype_argument_casts_first_and_grad_flows_back():
    x = make(random_array((2, 3)), requires_grad=True)
    y = ember.softmax(x, 1, dtype=ember.float64)
    assert y.dtype == ember.float64
    (y * make(random_array((2, 3), np.float64))).sum().backward()
    assert x.grad.dtype == ember.float32 and x.grad.shape == (2, 3)
    assert ember.tensor([1, 2, 3]).softmax(0, dtype=ember.float32).dtype == ember.float32


def test_backward_formulas():
    a = random_array((3, 4), np.float64)
    g = random_array((3, 4), np.float64)
    for log in (False, True):
        x = make(a, requires_grad=True)
        y = x.log_softmax(1) if log else x.softmax(1)
        y.backward(make(g))
        p = np_softmax(a, 1)
        expected = g - p * g.sum(1, keepdims=True) if log else p * (g - (g * p).sum(1, keepdims=True))
        assert_close(x.grad, expected, 1e-10, 1e-12)


@pytest.mark.parametrize("fn", [lambda t: t.softmax(1), lambda t: t.log_softmax(0)], ids=["softmax", "log_softmax"])
def test_double_backward(fn):
    x = make(random_array((3, 4), np.float64), requires_grad=True)
    w = make(random_array((3, 4), np.float64))

    def first(t):
        (gx,) = ember.autograd.grad([(fn(t) * w).sum()], [t], create_graph=True)
        return gx * gx
    assert ember.autograd.gradcheck(first, [x])


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_errors(name):
    fn = getattr(ember, name)
    with pytest.raises(IndexError, match=rf"^{name}: dimension out of range"):
        fn(ember.ones(2, 3), 2)
    with pytest.raises(IndexError, match=name):
        getattr(ember.ones(2, 3), name)(-3)
    with pytest.raises(RuntimeError, match=rf"^{name}: expected a floating point input, got int64"):
        fn(ember.tensor([1, 2, 3]), 0)


def test_special_values_in_wide_rows():
    # Rows longer than the vector width go through the polynomial exp.
    a = random_array((4, 37), np.float32, (-50.0, 50.0))
    a[1, 5] = math.nan
    a[2, :] = -math.inf
    a[3, 10] = -math.inf
    for dim in (1, 0):
        t = make(a if dim == 1 else np.ascontiguousarray(a.T))
        y = to_numpy(ember.softmax(t, dim))
        y = y if dim == 1 else y.T
        assert np.isnan(y[1]).all() and np.isnan(y[2]).all()
        assert_close(y[[0, 3]], np_softmax(a[[0, 3]], 1), 1e-5, 1e-7)
        ly = to_numpy(ember.log_softmax(t, dim))
        ly = ly if dim == 1 else ly.T
        assert ly[3, 10] == -math.inf
        assert_close(np.delete(ly[3], 10), np.delete(np_log_softmax(a[[3]], 1)[0], 10), 1e-5, 1e-5)
    # exp accuracy over the whole range the kernel sees (x - max in [-100, 0]).
    x = np.linspace(-100.0, 0.0, 4001).astype(np.float32)
    assert_close(ember.softmax(make(x), 0), np_softmax(x, 0), 2e-6, 1e-30)
