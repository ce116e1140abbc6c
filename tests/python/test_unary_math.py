"""The extra math functions (core/ops/unary_math.h) against numpy (and
PyTorch where importable), their gradients by gradcheck, and the special
functions (lgamma, digamma, polygamma(1, .)) by their identities."""
import math

import numpy as np
import pytest

import ember
from harness import OpCase, make, table_tests, to_numpy, torch

FLOATS = (np.float32, np.float64)


def tfn(name):
    return lambda *args: getattr(__import__("torch"), name)(*args)


def unary(name, numpy_fn, domain=None, shapes=([(3, 4)], [()], [(0,)]), dtypes=FLOATS, grad=True, rtol=1e-5):
    return OpCase(name, getattr(ember, name), numpy_fn, shapes, dtypes=dtypes, domain=domain, grad=grad, rtol=rtol,
                  torch_fn=tfn(name))


def binary(name, numpy_fn, domain=None, grad=True):
    return OpCase(name, getattr(ember, name), numpy_fn, [[(3, 4), (3, 4)], [(2, 1, 3), (4, 1)], [(), (3,)]],
                  dtypes=FLOATS, domain=domain, grad=grad, torch_fn=tfn(name))


np_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def np_digamma(x):
    # psi(x) from the recurrence and asymptotic series, independently of ember's code path
    def one(v):
        v = float(v)
        acc = 0.0
        while v < 20:
            acc -= 1 / v
            v += 1
        return acc + math.log(v) - 1 / (2 * v) - 1 / (12 * v * v) + 1 / (120 * v ** 4) - 1 / (252 * v ** 6)
    return np.vectorize(one, otypes=[np.float64])(x).astype(x.dtype)


def np_erfinv(y):
    # bisection on math.erf: an independent reference
    def one(v):
        lo, hi = -6.0, 6.0
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if math.erf(mid) < v else (lo, mid)
        return (lo + hi) / 2
    return np.vectorize(one, otypes=[np.float64])(y)


def np_frac(x):
    return x - np.trunc(x)


def np_xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x == 0, 0.0, x * np.log(y)).astype(np.result_type(x, y))


CASES = [
    unary("log2", np.log2, domain=(0.1, 4)),
    unary("log10", np.log10, domain=(0.1, 4)),
    unary("exp2", np.exp2),
    unary("sinh", np.sinh),
    unary("cosh", np.cosh),
    unary("tan", np.tan, domain=(-1.2, 1.2)),
    unary("asin", np.arcsin, domain=(-0.9, 0.9)),
    unary("acos", np.arccos, domain=(-0.9, 0.9)),
    unary("atan", np.arctan, domain=(-4, 4)),
    unary("asinh", np.arcsinh, domain=(-4, 4)),
    unary("acosh", np.arccosh, domain=(1.1, 4)),
    unary("atanh", np.arctanh, domain=(-0.9, 0.9)),
    unary("trunc", np.trunc, domain=(-3, 3), grad=False),
    unary("frac", np_frac, domain=(-3, 3)),
    unary("erfc", lambda x: np.vectorize(math.erfc, otypes=[x.dtype])(x), domain=(-2, 2)),
    unary("lgamma", lambda x: np_lgamma(x).astype(x.dtype), domain=(0.2, 6)),
    unary("erfinv", lambda x: np_erfinv(x).astype(x.dtype), domain=(-0.95, 0.95)),
    unary("digamma", np_digamma, domain=(0.2, 6), rtol=2e-5),
    OpCase("arcsin_alias", ember.arcsin, np.arcsin, [[(5,)]], domain=(-0.9, 0.9)),
    binary("atan2", np.arctan2, domain=(-2, 2)),
    binary("hypot", np.hypot, domain=(0.5, 3)),
    binary("fmod", np.fmod, domain=(0.5, 3)),
    binary("copysign", np.copysign, domain=(-2, 2)),
    binary("logaddexp", np.logaddexp),
    binary("logaddexp2", np.logaddexp2),
    binary("xlogy", np_xlogy, domain=(0.2, 3)),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_integer_and_bool_inputs():
    np.testing.assert_allclose(ember.log2(ember.tensor([1, 2, 8])).numpy(), [0.0, 1.0, 3.0])
    assert ember.log2(ember.tensor([1, 2])).dtype == ember.float32
    assert ember.atan2(ember.tensor([1]), ember.tensor([1])).dtype == ember.float32
    assert ember.trunc(ember.tensor([3, -2])).tolist() == [3, -2]  # integers are already whole
    # C's remainder for integers: the sign of the dividend
    assert ember.fmod(ember.tensor([7, -7, 7]), ember.tensor([3, 3, -3])).tolist() == [1, -1, 1]
    with pytest.raises(TypeError, match="frac: expected a floating point tensor, got int64"):
        ember.frac(ember.tensor([1]))


def test_half_dtypes_compute_in_float():
    x = ember.tensor([0.25, 0.5, 0.75])
    for dtype in (ember.float16, ember.bfloat16):
        got = ember.asin(x.to(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got.float().numpy(), np.arcsin([0.25, 0.5, 0.75]), rtol=1e-2)


def test_numbers_and_broadcasting():
    a = ember.tensor([[1.0], [-2.0]])
    np.testing.assert_allclose(ember.atan2(a, 2.0).numpy(), np.arctan2([[1.0], [-2.0]], 2.0), rtol=1e-6)
    np.testing.assert_allclose(ember.atan2(1.0, a).numpy(), np.arctan2(1.0, [[1.0], [-2.0]]), rtol=1e-6)
    np.testing.assert_allclose(a.hypot(ember.tensor([3.0, 4.0])).numpy(), np.hypot([[1.0], [-2.0]], [3.0, 4.0]))
    with pytest.raises(TypeError, match="atan2: expected a Tensor as input or other"):
        ember.atan2(1.0, 2.0)


def test_special_values():
    inf, nan = float("inf"), float("nan")
    assert ember.digamma(ember.tensor([0.0, -0.0])).tolist() == [-inf, inf]
    assert math.isnan(ember.digamma(ember.tensor([-2.0])).item())
    assert ember.logaddexp(ember.tensor([inf, -inf]), ember.tensor([inf, -inf])).tolist() == [inf, -inf]
    out = ember.xlogy(ember.tensor([0.0, 0.0, 2.0]), ember.tensor([0.0, nan, 1.0])).tolist()
    assert out[0] == 0.0 and math.isnan(out[1]) and out[2] == 0.0
    assert ember.copysign(ember.tensor([2.0]), ember.tensor([-0.0])).item() == -2.0
    assert ember.polygamma(1, ember.tensor([-1.0])).item() == inf


def test_digamma_and_trigamma_identities():
    x = ember.tensor(np.array([-3.7, -2.5, -0.5, 0.3, 0.7, 2.0, 5.0, 12.5, 40.0]), dtype=ember.float64)
    euler = 0.57721566490153286061
    np.testing.assert_allclose(ember.digamma(ember.tensor([1.0, 0.5], dtype=ember.float64)).numpy(),
                               [-euler, -euler - 2 * math.log(2)], rtol=1e-13)
    # psi(x + 1) - psi(x) = 1/x and psi'(x) - psi'(x + 1) = 1/x^2
    np.testing.assert_allclose((ember.digamma(x + 1) - ember.digamma(x)).numpy(), 1 / x.numpy(), rtol=1e-11)
    tri = lambda t: ember.polygamma(1, t)  # noqa: E731
    np.testing.assert_allclose((tri(x) - tri(x + 1)).numpy(), 1 / x.numpy() ** 2, rtol=1e-10)
    np.testing.assert_allclose(tri(ember.tensor([1.0], dtype=ember.float64)).numpy(), [math.pi ** 2 / 6], rtol=1e-13)
    # lgamma's gradient is digamma; digamma's is trigamma
    assert ember.autograd.gradcheck(ember.digamma, (make(np.array([0.4, 1.5, 7.0]), requires_grad=True),))
    y = make(np.array([0.5, 3.0]), requires_grad=True)
    (g,) = ember.autograd.grad(ember.lgamma(y).sum(), y, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), y)
    np.testing.assert_allclose(to_numpy(gg), [math.pi ** 2 / 2, math.pi ** 2 / 6 - 1 - 1 / 4], rtol=1e-12)
    if torch is not None:
        np.testing.assert_allclose(ember.digamma(x).numpy(), torch.digamma(torch.tensor(x.numpy())).numpy(),
                                   rtol=1e-12)
    with pytest.raises(NotImplementedError, match="polygamma: only n = 0"):
        ember.polygamma(2, x)


def _ulps(got, ref):
    """Distance in float32 units in the last place (the sign-magnitude bits made monotone)."""
    def ordered(v):
        bits = v.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    return np.abs(ordered(got) - ordered(ref))


def test_float32_atan2_within_3_ulp_and_libm_special_cases():
    # The CPU computes float32 atan2 with a vectorizing polynomial: within 3 ulp of the
    # correctly rounded angle over magnitudes 1e-30..1e30, and libm's answers at zeros,
    # infinities and NaN.
    rng = np.random.default_rng(5)
    y = (rng.standard_normal(200_000) * 10.0 ** rng.integers(-30, 31, 200_000)).astype(np.float32)
    x = (rng.standard_normal(200_000) * 10.0 ** rng.integers(-30, 31, 200_000)).astype(np.float32)
    got = to_numpy(ember.atan2(make(y), make(x)))
    ref = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)
    assert _ulps(got, ref).max() <= 3
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, 3e38], dtype=np.float32)
    ys, xs = (v.ravel() for v in np.meshgrid(special, special))
    got = to_numpy(ember.atan2(make(ys), make(xs)))
    ref = np.arctan2(ys, xs)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    finite = ~np.isnan(ref)
    assert _ulps(got[finite], ref[finite]).max() <= 3
    np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(ref[finite]))  # signed zeros and pi
