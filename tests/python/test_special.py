"""ember.special against scipy.special (when importable), torch.special (when
importable) and values known to 15 digits (always); float64 gradcheck and
gradgradcheck of every differentiable function."""
import math

import numpy as np
import pytest

import ember
import ember.special as es
from ember.autograd import gradcheck, gradgradcheck
from harness import OpCase, table_tests

try:
    import scipy.special as ss
except ImportError:  # pragma: no cover - depends on the machine
    ss = None
try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    torch = None

needs_scipy = pytest.mark.skipif(ss is None, reason="scipy is not installed")


def _np_ndtr(x):
    return 0.5 * np.vectorize(math.erfc, otypes=[np.float64])(-np.asarray(x, dtype=np.float64) / math.sqrt(2))


def _np_sinc(x):
    return np.sinc(x)


def _np_entr(x):
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        return np.where(x > 0, -x * np.log(np.where(x > 0, x, 1)), np.where(x == 0, 0.0, -np.inf))


def _cast_like(fn):
    """A float64 reference, returned in its input's dtype as ember does."""
    def ref(*arrays):
        return np.asarray(fn(*[np.asarray(a, dtype=np.float64) for a in arrays])).astype(arrays[0].dtype)
    return ref


SHAPES = [[(3, 4)], [()], [(5,)], [(0,)]]
CASES = [
    OpCase("special.ndtr", es.ndtr, _cast_like(_np_ndtr), SHAPES, dtypes=(np.float32, np.float64), domain=(-4, 4)),
    OpCase("special.sinc", es.sinc, _cast_like(_np_sinc), SHAPES, dtypes=(np.float32, np.float64)),
    OpCase("special.entr", es.entr, _cast_like(_np_entr), SHAPES, dtypes=(np.float32, np.float64), domain=(0.1, 3)),
    OpCase("special.expit", es.expit, _cast_like(lambda x: 1 / (1 + np.exp(-x))), SHAPES),
    OpCase("special.xlog1py", es.xlog1py, _cast_like(lambda x, y: x * np.log1p(y)), [[(3, 4), (4,)], [(), (2,)]],
           domain=(0.1, 2)),
]
if ss is not None:
    CASES += [
        OpCase("special.erfcx", es.erfcx, _cast_like(ss.erfcx), SHAPES, dtypes=(np.float32, np.float64),
               domain=(-3, 8), rtol=1e-6),
        OpCase("special.log_ndtr", es.log_ndtr, _cast_like(ss.log_ndtr), SHAPES, dtypes=(np.float32, np.float64),
               domain=(-10, 5)),
        OpCase("special.ndtri", es.ndtri, _cast_like(ss.ndtri), SHAPES, dtypes=(np.float32, np.float64),
               domain=(0.05, 0.95)),
        OpCase("special.i0", es.i0, _cast_like(ss.i0), SHAPES, dtypes=(np.float32, np.float64), domain=(-5, 5)),
        OpCase("special.i0e", es.i0e, _cast_like(ss.i0e), SHAPES, dtypes=(np.float32, np.float64), domain=(-5, 5)),
        OpCase("special.i1", es.i1, _cast_like(ss.i1), SHAPES, dtypes=(np.float32, np.float64), domain=(-5, 5)),
        OpCase("special.i1e", es.i1e, _cast_like(ss.i1e), SHAPES, dtypes=(np.float32, np.float64), domain=(-5, 5)),
        OpCase("special.zeta_q", lambda q: es.zeta(3.0, q), _cast_like(lambda q: ss.zeta(3.0, q)), SHAPES,
               dtypes=(np.float32, np.float64), domain=(0.2, 5)),
        OpCase("special.polygamma3", lambda x: es.polygamma(3, x), _cast_like(lambda x: ss.polygamma(3, x)), SHAPES,
               dtypes=(np.float64,), domain=(0.3, 5), rtol=1e-9),
        OpCase("special.bessel_j0", es.bessel_j0, _cast_like(ss.j0), SHAPES, dtypes=(np.float32, np.float64),
               domain=(-30, 30)),
        OpCase("special.bessel_j1", es.bessel_j1, _cast_like(ss.j1), SHAPES, dtypes=(np.float32, np.float64),
               domain=(-30, 30)),
        OpCase("special.multigammaln", lambda x: es.multigammaln(x, 3),
               _cast_like(np.vectorize(lambda v: ss.multigammaln(v, 3), otypes=[np.float64])), [[(3, 4)], [()]],
               dtypes=(np.float64,),
               domain=(1.1, 5)),
    ]

test_forward, test_gradcheck = table_tests(CASES)


# ---- accuracy over wide ranges (float64)

WIDE = np.concatenate([np.linspace(-30, 30, 241), [0.0, 1e-12, -1e-12, 4.999, 5.0, 5.001, 26.0, 27.0, 50.0, 1e5]])
BESSEL = np.concatenate([np.linspace(-60, 60, 241), [29.99, 30.0, 30.01, 100.0, 700.0, 720.0, -700.0]])
PROBS = np.concatenate([np.linspace(0, 1, 201), [1e-300, 1e-100, 1e-20, 1e-9, 1e-8, 1.01e-8, 1 - 1e-12, -0.1, 1.1]])


def _rel_err(got, ref):
    got, ref = np.asarray(got, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    assert (np.isnan(got) == np.isnan(ref)).all(), (got, ref)
    # Below 1e-300 a denormal and a flushed 0 are both right.
    same = (got == ref) | np.isnan(ref) | ((np.abs(got) < 1e-300) & (np.abs(ref) < 1e-300))
    with np.errstate(all="ignore"):
        return np.where(same, 0.0, np.abs(got - ref) / np.abs(ref)).max()


@needs_scipy
@pytest.mark.parametrize("name,xs,tol", [
    ("erfcx", WIDE, 1e-14), ("log_ndtr", np.concatenate([WIDE, [-40.0, -1e3, 38.0]]), 1e-12),
    ("ndtr", WIDE, 1e-12), ("ndtri", PROBS, 1e-13), ("i0", BESSEL, 1e-14), ("i0e", BESSEL, 1e-14),
    ("i1", BESSEL, 1e-14), ("i1e", BESSEL, 1e-14), ("entr", np.array([0.0, 0.5, 3.0, -1.0, np.nan]), 1e-15),
])
def test_wide_range_against_scipy(name, xs, tol):
    got = getattr(es, name)(ember.tensor(xs, dtype=ember.float64)).numpy()
    assert _rel_err(got, getattr(ss, name)(xs)) < tol


@needs_scipy
@pytest.mark.parametrize("name,ref", [("bessel_j0", "j0"), ("bessel_j1", "j1")])
def test_bessel_j_against_scipy(name, ref):
    # Absolute error: relative error is meaningless at the zeros.
    xs = np.concatenate([np.linspace(-40, 40, 1601), [1e-300, 1e-20, 1e-8, 1e-3, 24.999, 25.0, 25.001]])
    got = getattr(es, name)(ember.tensor(xs, dtype=ember.float64)).numpy()
    np.testing.assert_allclose(got, getattr(ss, ref)(xs), rtol=0, atol=5e-15)


def test_bessel_j_far_out():
    """Values from mpmath at 40 digits; the large-argument expansion keeps
    full relative precision (no digits lost to x - pi/4)."""
    xs = [1e4, 1e6, 30.0, 7.3, 0.5, -2.0]
    j0 = [-0.0070961603533888015, 0.00033104301373987376, -0.08636798358104021, 0.2882169476350144,
          0.9384698072408129, 0.22389077914123567]
    j1 = [0.0036474507555295803, -0.000725968356813763, -0.11875106261662294, 0.08257043049325784,
          0.2422684576748739, -0.5767248077568734]
    t = ember.tensor(xs, dtype=ember.float64)
    np.testing.assert_allclose(es.bessel_j0(t).numpy(), j0, rtol=3e-15)
    np.testing.assert_allclose(es.bessel_j1(t).numpy(), j1, rtol=3e-15)


@needs_scipy
@pytest.mark.parametrize("q", [0.1, 0.5, 1.0, 2.5, 10.0, 100.0, -2.5, -0.5, -3.0, 0.0])
def test_zeta_against_scipy(q):
    s = np.array([1.5, 2.0, 3.0, 4.5, 10.0, 30.0, 0.5, 1.0, -1.0])
    got = es.zeta(ember.tensor(s, dtype=ember.float64), q).numpy()
    assert _rel_err(got, ss.zeta(s, q)) < 1e-14


def test_zeta_far_left_of_zero():
    # At the poles (q a non-positive integer) the answer is inf and q < 0 with s not an integer
    # is NaN, whatever |q|: neither adds |q| direct terms (q = -1e9 used to run for minutes). A
    # non-integer q < 0 with an integer s still sums past 0, as one vectorized sum.
    f64 = ember.float64
    s = ember.tensor([2.0, 2.0, 2.5, 3.0, 0.5], dtype=f64)
    q = ember.tensor([-1e9, -2.0**31, -1e9 + 0.5, -7.5, -1e12 + 0.5], dtype=f64)
    got = es.zeta(s, q).tolist()
    assert got[:2] == [math.inf, math.inf] and math.isnan(got[2]) and math.isnan(got[4])
    assert got[3] == pytest.approx(0.0077822558979524425, rel=1e-13)  # scipy.special.zeta(3, -7.5)
    assert es.zeta(ember.tensor([2.0], dtype=f64), ember.tensor([-999_999.5], dtype=f64)).item() == \
        pytest.approx(9.869603401089359, rel=1e-10)
    # A NaN q is NaN, also beside a negative one (its min made the shift NaN).
    got = es.zeta(ember.tensor([2.0, 2.0], dtype=f64), ember.tensor([math.nan, -0.5], dtype=f64)).tolist()
    assert math.isnan(got[0]) and got[1] == pytest.approx(4 + math.pi**2 / 2, rel=1e-13)


@needs_scipy
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_polygamma_against_scipy(n):
    x = np.array([0.1, 0.5, 1.0, 3.3, 20.0, -0.5, -2.5, -3.7])
    got = es.polygamma(n, ember.tensor(x, dtype=ember.float64)).numpy()
    tol = 1e-6 if n <= 1 else 1e-13  # n <= 1 is ember's own polygamma op
    assert _rel_err(got, ss.polygamma(n, x)) < tol


def test_known_values():
    """Reference values (15+ digits) that hold without scipy or torch."""
    f64 = ember.float64
    checks = [
        (es.erfcx, [1.0, 10.0, 30.0, -1.0], [0.427583576155807, 0.05614099274382259, 0.01879588886141675,
                                             5.008980080762283]),
        (es.ndtr, [-1.0, 0.0, -10.0], [0.15865525393145707, 0.5, 7.6198530241604696e-24]),
        (es.ndtri, [0.975, 0.5, 1e-10], [1.959963984540054, 0.0, -6.361340902404056]),
        (es.log_ndtr, [-20.0, 3.0, -1e4], [-203.91715537109729, -0.0013508099647481925, -50000010.12927892]),
        (es.i0, [1.0, 40.0], [1.2660658777520082, 1.48947747934199e16]),
        (es.i1, [1.0, -2.0], [0.5651591039924851, -1.5906368546373295]),
        (es.i0e, [100.0], [0.03994437929909668]),
        (lambda t: es.zeta(t, 1.0), [2.0, 3.0], [math.pi ** 2 / 6, 1.202056903159594]),
    ]
    for fn, xs, expected in checks:
        got = fn(ember.tensor(xs, dtype=f64)).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=0, err_msg=str(fn))


# ---- torch.special

TORCH_UNARY = ["expit", "erf", "erfc", "erfcx", "erfinv", "gammaln", "digamma", "psi", "i0", "i0e", "i1", "i1e",
               "ndtr", "ndtri", "log_ndtr", "sinc", "entr", "log1p", "expm1", "exp2", "bessel_j0", "bessel_j1"]


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("name", TORCH_UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_against_torch(name, dtype):
    rng = np.random.default_rng(3)
    x = rng.uniform(-6, 6, size=(40,))
    if name == "ndtri" or name == "erfinv":
        x = rng.uniform(0.01, 0.99, size=(40,)) * (2 if name == "erfinv" else 1) - (1 if name == "erfinv" else 0)
    if name in ("gammaln", "digamma", "psi", "entr"):
        x = np.abs(x) + 0.1
    x = x.astype(dtype)
    got = getattr(es, name)(ember.tensor(x)).numpy()
    ref = getattr(torch.special, name)(torch.tensor(x)).numpy()
    assert got.dtype == ref.dtype
    tol = 1e-12 if dtype == "float64" else 2e-6
    if name.startswith("bessel_j"):
        tol = 1e-6  # torch's own bessel_j0/j1 are only good to ~3e-7 (scipy agrees with ember to 5e-15)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_other_functions_against_torch():
    x = np.array([[0.2, 1.5, 3.0], [2.5, 0.7, 4.0]])
    tx, ex = torch.tensor(x), ember.tensor(x)
    pairs = [
        (es.logit(ex, eps=0.1), torch.special.logit(tx, eps=0.1)),
        (es.xlogy(ex, ex + 1), torch.special.xlogy(tx, tx + 1)),
        (es.xlog1py(ex, ex), torch.special.xlog1py(tx, tx)),
        (es.xlog1py(0, ex), torch.special.xlog1py(0, tx)),
        (es.zeta(ex + 1.5, ex), torch.special.zeta(tx + 1.5, tx)),
        (es.zeta(ex + 1.5, 2.0), torch.special.zeta(tx + 1.5, 2.0)),
        (es.polygamma(2, ex), torch.special.polygamma(2, tx)),
        (es.multigammaln(ex + 1, 2), torch.special.multigammaln(tx + 1, 2)),
        (es.logsumexp(ex, 1), torch.special.logsumexp(tx, 1)),
        (es.logsumexp(ex, 0, keepdim=True), torch.special.logsumexp(tx, 0, keepdim=True)),
        (es.softmax(ex, 1), torch.special.softmax(tx, 1)),
        (es.log_softmax(ex, 0, dtype=ember.float32), torch.special.log_softmax(tx, 0, dtype=torch.float32)),
        (es.round(ex, decimals=1), torch.special.round(tx, decimals=1)),
    ]
    for got, ref in pairs:
        assert tuple(got.shape) == tuple(ref.shape)
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-6, atol=1e-9)


# ---- edge values, dtypes, errors

def test_edges():
    nan, inf = math.nan, math.inf
    t = ember.tensor
    np.testing.assert_array_equal(es.ndtri(t([0.0, 1.0, -0.5, 1.5, nan])).numpy(), [-inf, inf, nan, nan, nan])
    np.testing.assert_array_equal(es.entr(t([0.0, -1.0, nan])).numpy(), [0.0, -inf, nan])
    np.testing.assert_allclose(es.sinc(t([0.0, 1.0, 0.5])).numpy(), [1.0, 0.0, 2 / math.pi], atol=1e-7)
    np.testing.assert_array_equal(es.xlog1py(t([0.0, 0.0]), t([-1.0, nan])).numpy()[:1], [0.0])
    assert math.isnan(es.xlog1py(t([0.0]), t([nan])).item())
    z = es.zeta(t([1.0, 0.5, 2.0]), t([1.0, 1.0, 0.0])).numpy()
    assert z[0] == inf and math.isnan(z[1]) and z[2] == inf
    assert es.erfcx(t([-30.0])).item() == inf and es.i0(t([1000.0], dtype=ember.float64)).item() == inf


def test_integer_inputs_become_float():
    for fn in (es.ndtr, es.erfcx, es.i0, es.sinc, es.expit, es.gammaln):
        out = fn(ember.tensor([1, 2, 3]))
        assert out.dtype == ember.float32
    assert es.erfcx(ember.tensor([1.0], dtype=ember.float16)).dtype == ember.float16
    assert es.i0(ember.tensor([1.0], dtype=ember.bfloat16)).dtype == ember.bfloat16


def test_errors_name_the_function():
    with pytest.raises(TypeError, match=r"special.erfcx\(\)"):
        es.erfcx(1.0)
    with pytest.raises(ValueError, match="special.multigammaln: all elements must be greater than"):
        es.multigammaln(ember.tensor([0.4]), 2)
    with pytest.raises(ValueError, match="special.multigammaln: p has to be greater"):
        es.multigammaln(ember.tensor([2.0]), 0)
    with pytest.raises(ValueError, match="special.polygamma: n must be"):
        es.polygamma(-1, ember.tensor([2.0]))
    with pytest.raises(TypeError, match=r"special.zeta\(\)"):
        es.zeta(2.0, 3.0)
    s = ember.tensor([3.0], dtype=ember.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="special.zeta: the derivative with respect to 'input'"):
        es.zeta(s, 2.0).sum().backward()


# ---- gradients (first and second order)

X = [-3.1, -0.7, 0.4, 2.2, 6.0]
GRAD_CASES = [
    ("erfcx", es.erfcx, X), ("log_ndtr", es.log_ndtr, X), ("ndtr", es.ndtr, X),
    ("ndtri", es.ndtri, [0.02, 0.1, 0.5, 0.8, 0.99]), ("i0", es.i0, X), ("i0e", es.i0e, X), ("i1", es.i1, X),
    ("i1e", es.i1e, X + [0.0]), ("sinc", es.sinc, X), ("entr", es.entr, [0.3, 1.2, 4.0]),
    ("xlog1py", lambda t: es.xlog1py(t, ember.tensor([0.5], dtype=ember.float64)), X),
    ("zeta", lambda t: es.zeta(3.0, t), [0.3, 1.2, 4.0]), ("polygamma3", lambda t: es.polygamma(3, t), [0.3, 1.2, 4.0]),
    ("multigammaln", lambda t: es.multigammaln(t, 3), [2.3, 3.2, 6.0]), ("expit", es.expit, X),
    ("logit", lambda t: es.logit(t, eps=0.05), [0.02, 0.3, 0.7]), ("gammaln", es.gammaln, [0.3, 1.2, 4.0]),
    ("bessel_j0", es.bessel_j0, X + [0.0, 31.0]), ("bessel_j1", es.bessel_j1, X + [0.0, -31.0]),
]


@pytest.mark.parametrize("name,fn,values", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_first_and_second_derivatives(name, fn, values):
    x = ember.tensor(values, dtype=ember.float64, requires_grad=True)
    assert gradcheck(fn, (x,))
    if name not in ("logit", "gammaln"):  # second derivatives of ember's own ops are their tests' business
        assert gradgradcheck(fn, (x,))


def test_closed_form_gradients():
    x = ember.tensor([0.5, 2.0], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(es.i0(x).sum(), [x])
    np.testing.assert_allclose(g.numpy(), es.i1(x).detach().numpy(), rtol=1e-14)
    (g,) = ember.autograd.grad(es.ndtr(x).sum(), [x])
    np.testing.assert_allclose(g.numpy(), np.exp(-np.array([0.5, 2.0]) ** 2 / 2) / math.sqrt(2 * math.pi), rtol=1e-13)
    assert es.erfcx(x).grad_fn.name().startswith("Erfcx")
