"""Top-level functions of python/ember/_tensor_api_functions.py: constants,
rsub, scalar_tensor, trapezoid / trapz / cumulative_trapezoid, vander,
unravel_index, histogram, isin and torch's top-level names of nn.functional
operations: against numpy (and PyTorch where importable), gradcheck, errors."""
import math

import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, table_tests, to_numpy, torch

FLOATS = (np.float32, np.float64)
TESTS = np.array([2, 5, -1])


def np_cumtrapz(y, x=None, dx=1.0, axis=-1):
    y = np.moveaxis(y, axis, -1)
    width = np.diff(np.moveaxis(x, axis, -1) if x is not None and x.ndim > 1 else x) if x is not None else dx
    return np.moveaxis(np.cumsum((y[..., 1:] + y[..., :-1]) * width / 2, -1), -1, axis)


def np_hist(a, bins, range=None):
    hist, edges = np.histogram(a, bins, range=range)
    return np.concatenate([hist, edges]).astype(a.dtype)  # one array: the harness compares single results


CASES = [
    OpCase("trapezoid", lambda y: ember.trapezoid(y), lambda y: np.trapezoid(y), [[(3, 5)], [(4,)], [(2, 1)]],
           dtypes=FLOATS, rtol=1e-5, torch_fn=lambda y: torch.trapezoid(y)),
    OpCase("trapezoid_x", lambda y, x: ember.trapezoid(y, x, dim=0), lambda y, x: np.trapezoid(y, x, axis=0),
           [[(4, 3), (4, 3)], [(5,), (5,)]], dtypes=FLOATS, rtol=1e-5,
           torch_fn=lambda y, x: torch.trapezoid(y, x, dim=0)),
    OpCase("trapz_dx", lambda y: ember.trapz(y, dx=0.5), lambda y: np.trapezoid(y, dx=0.5), [[(3, 5)]], rtol=1e-5),
    OpCase("trapezoid_int", lambda y: ember.trapezoid(y), lambda y: np.trapezoid(y).astype(np.float32), [[(3, 5)]],
           dtypes=(np.int64,), grad=False),
    OpCase("cumulative_trapezoid", lambda y: ember.cumulative_trapezoid(y), lambda y: np_cumtrapz(y),
           [[(3, 5)], [(6,)]], dtypes=FLOATS, rtol=1e-5, torch_fn=lambda y: torch.cumulative_trapezoid(y)),
    OpCase("cumulative_trapezoid_x", lambda y, x: ember.cumulative_trapezoid(y, x), lambda y, x: np_cumtrapz(y, x),
           [[(5,), (5,)]], dtypes=FLOATS, rtol=1e-5),
    OpCase("vander", lambda x: ember.vander(x), lambda x: np.vander(x), [[(4,)], [(1,)]],
           dtypes=(np.float32, np.float64, np.int64), rtol=1e-5, torch_fn=lambda x: torch.vander(x)),
    OpCase("vander_n_increasing", lambda x: ember.vander(x, N=3, increasing=True),
           lambda x: np.vander(x, 3, increasing=True), [[(5,)]], dtypes=FLOATS, rtol=1e-5),
    OpCase("rsub", lambda a, b: ember.rsub(a, b, alpha=2), lambda a, b: b - 2 * a, [[(3, 4), (4,)], [(), ()]],
           dtypes=(np.float32, np.int64), torch_fn=lambda a, b: torch.rsub(a, b, alpha=2)),
    OpCase("isin", lambda a: ember.isin(a, ember.tensor(TESTS, device=a.device)), lambda a: np.isin(a, TESTS),
           [[(3, 4)], [()], [(0,)]], dtypes=(np.int64, np.float32), grad=False,
           torch_fn=lambda a: torch.isin(a, torch.from_numpy(TESTS))),
    OpCase("isin_invert", lambda a, b: ember.isin(a, b, invert=True), lambda a, b: np.isin(a, b, invert=True),
           [[(3, 4), (5,)], [(6,), (2, 2)]], dtypes=(np.int64,), grad=False),
    OpCase("histogram", lambda a: ember.cat(list(ember.histogram(a, 5))), lambda a: np_hist(a, 5), [[(40,)], [(3, 7)]],
           dtypes=FLOATS, grad=False, rtol=1e-5, extra={"fuzz": False}),
    OpCase("histogram_range", lambda a: ember.cat(list(a.histogram(4, range=(-1.0, 1.0)))),
           lambda a: np_hist(a, 4, (-1.0, 1.0)), [[(30,)]], dtypes=FLOATS, grad=False, rtol=1e-5),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_constants_and_scalar_tensor():
    assert ember.pi == math.pi and ember.e == math.e and ember.inf == math.inf and math.isnan(ember.nan)
    assert ember.newaxis is None and ember.ones(3)[ember.newaxis].shape == (1, 3)
    s = ember.scalar_tensor(3)
    assert s.shape == () and s.dtype == ember.float32 and s.item() == 3.0
    assert ember.scalar_tensor(2, dtype=ember.int64, requires_grad=False).dtype == ember.int64
    assert ember.scalar_tensor(1.5, dtype=ember.float64, requires_grad=True).requires_grad


def test_unravel_index():
    rows, cols = ember.unravel_index(ember.tensor([4, 1, -1, 5]), (2, 3))
    nr, nc = np.unravel_index([4, 1, 5, 5], (2, 3))
    assert rows.tolist() == list(nr) and cols.tolist() == list(nc)
    coords = ember.unravel_index(ember.tensor([[7, 0], [23, 11]]), (2, 3, 4))
    expected = np.unravel_index(np.array([[7, 0], [23, 11]]), (2, 3, 4))
    for got, want in zip(coords, expected):
        np.testing.assert_array_equal(got.numpy(), want)
    assert ember.unravel_index(ember.tensor(4), (2, 3))[0].shape == ()
    with pytest.raises(RuntimeError, match="unravel_index: index out of bounds"):
        ember.unravel_index(ember.tensor([6]), (2, 3))
    with pytest.raises(TypeError, match="unravel_index: expected 'indices' to be an integer tensor"):
        ember.unravel_index(ember.tensor([1.0]), (2, 3))


def test_histogram_weights_density_edges():
    rng = np.random.default_rng(4)
    v, w = rng.standard_normal(50), rng.uniform(0, 1, 50)
    edges = np.array([-2.0, -0.5, 0.0, 3.0])
    hist, bin_edges = ember.histogram(make(v), make(edges), weight=make(w), density=True)
    want, want_edges = np.histogram(v, edges, weights=w, density=True)
    assert_close(hist, want, 1e-10, 1e-12)
    assert_close(bin_edges, want_edges)
    assert type(ember.histogram(make(v), 3)).__name__ == "histogram"
    same = ember.histogram(ember.tensor([2.0, 2.0]), 3)
    assert_close(same.bin_edges, np.histogram(np.array([2.0, 2.0]), 3)[1].astype(np.float32))
    with pytest.raises(NotImplementedError, match="histogram: not implemented for"):
        ember.histogram(ember.tensor([1, 2]), 3)
    with pytest.raises(RuntimeError, match="histogram: bins must be > 0"):
        ember.histogram(ember.ones(3), 0)


def test_integration_errors_and_gradients():
    with pytest.raises(RuntimeError, match="trapezoid: There must be one `x` value for each sample point"):
        ember.trapezoid(ember.ones(4), ember.ones(3))
    with pytest.raises(TypeError, match="trapezoid\\(\\): argument 'x' must be Tensor"):
        ember.trapezoid(ember.ones(4), 2)
    assert ember.trapezoid(ember.tensor([1.0])).item() == 0.0
    assert ember.cumulative_trapezoid(ember.tensor([1])).shape == (0,)
    y = make(np.array([1.0, 2.0, 4.0]), requires_grad=True)
    x = make(np.array([0.0, 1.0, 3.0]), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: ember.trapezoid(a, b), [y, x])
    with pytest.raises(RuntimeError, match="vander: x must be a one-dimensional tensor"):
        ember.vander(ember.ones(2, 2))


def test_isin_scalars():
    assert ember.isin(3, ember.tensor([1, 3])).item() is True
    assert ember.isin(ember.tensor([1, 2, 3]), 2, invert=True).tolist() == [True, False, True]
    assert ember.isin(ember.tensor([1, 2]), ember.tensor([], dtype=ember.int64)).tolist() == [False, False]
    with pytest.raises(TypeError, match="isin\\(\\): expected at least one of elements and test_elements"):
        ember.isin(1, 2)


def test_top_level_nn_names():
    a = ember.randn(4, 3)
    F = ember.nn.functional
    assert_close(ember.layer_norm(a, (3,)), F.layer_norm(a, (3,)))
    assert_close(ember.pdist(a), F.pdist(a))
    assert_close(ember.celu(a, 0.5), F.celu(a, 0.5))
    assert_close(ember.selu(a), F.selu(a))
    assert_close(ember.threshold(a, 0.1, 20.0), F.threshold(a, 0.1, 20.0))
    assert_close(ember.dropout(a, 0.5, False), a)
    assert_close(ember.rms_norm(a, (3,)), F.rms_norm(a, (3,)))
    assert_close(ember.group_norm(ember.randn(2, 4, 3), 2).shape, (2, 4, 3))
    assert ember.is_inference(a) is False
    if torch is not None:
        t = torch.from_numpy(a.numpy())
        assert_close(ember.layer_norm(a, (3,)), torch.layer_norm(t, (3,)).numpy(), 1e-5, 1e-5)
        assert_close(ember.pdist(a), torch.pdist(t).numpy(), 1e-5, 1e-5)


def test_top_level_nn_inplace_names_return_their_input():
    x = ember.tensor([-1.0, 0.5, 2.0])
    assert ember.threshold_(x, 0.0, 5.0) is x and x.tolist() == [5.0, 0.5, 2.0]
    assert ember.selu_(x) is x and ember.celu_(x, 0.5) is x and ember.rrelu_(x) is x
    assert ember.dropout_(x, 0.5, False) is x and ember.alpha_dropout_(x, 0.5, False) is x
    y = ember.ones(2000)
    ember.dropout_(y, 0.5, True)
    kept = float((y != 0).sum())
    assert 800 < kept < 1200 and set(y.unique().tolist()) <= {0.0, 2.0}
    z = ember.tensor([0.2, 0.5])
    assert ember.logit_(z) is z and abs(z[1].item()) < 1e-7


def test_isin_with_nan_in_the_test_elements():
    # NaN matches nothing; a NaN tail in the sorted pool must not hide the numbers before it.
    nan = float("nan")
    x = make(np.array([1.0, 2.0, nan, 5.0]))
    for pool in ([1.0, 2.0, nan, nan, nan], [nan], [nan, 2.0]):
        got = to_numpy(ember.isin(x, make(np.array(pool))))
        np.testing.assert_array_equal(got, np.isin(to_numpy(x), pool))
