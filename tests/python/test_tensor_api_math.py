"""Elementwise math and statistics added in python/ember/_tensor_api_math.py and
_tensor_api_stats.py (sgn, signbit, heaviside, gcd/lcm, fmax/fmin, float_power,
deg2rad/rad2deg, sinc, i0, ldexp, frexp, nextafter, mvlgamma, renorm, dist,
nanmedian, nanquantile, mode, cov, corrcoef, the window functions): against
numpy (and PyTorch where importable), gradcheck, and errors."""
import math

import numpy as np
import pytest

import ember
from harness import OpCase, assert_close, make, table_tests, to_numpy, torch

FLOATS = (np.float32, np.float64)
INTS = (np.int64, np.int32)
NAN = float("nan")


def np_mvlgamma(a, p):
    lg = np.vectorize(math.lgamma)
    total = sum(lg(a.astype(np.float64) - j / 2) for j in range(p)) + p * (p - 1) / 4 * math.log(math.pi)
    return total.astype(a.dtype)


def np_renorm(a, p, dim, maxnorm):
    moved = np.moveaxis(a, dim, 0)
    norms = (np.abs(moved) ** p).reshape(moved.shape[0], -1).sum(1) ** (1.0 / p)
    factor = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0).astype(a.dtype)
    return np.moveaxis(moved * factor.reshape((-1,) + (1,) * (a.ndim - 1)), 0, dim)


def np_dist(a, b, p):
    return np.asarray(np.linalg.norm((a - b).ravel(), p), dtype=np.result_type(a, b))


def with_nans(a):
    return np.where(a > 1, NAN, a)


def e_with_nans(a):
    return ember.where(a > 1, ember.full_like(a, NAN), a)


def np_nanmedian_lower(a, axis):
    s = np.sort(a, axis=axis)  # NaNs last
    count = (~np.isnan(a)).sum(axis=axis, keepdims=True)
    k = np.maximum((count - 1) // 2, 0)
    return np.take_along_axis(s, k, axis=axis).squeeze(axis)


def np_mode(a, axis):
    """The smallest of the most frequent values along axis."""
    moved = np.moveaxis(a, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    out = []
    for row in flat:
        values, counts = np.unique(row, return_counts=True)
        out.append(values[np.argmax(counts)])
    return np.array(out, dtype=a.dtype).reshape(moved.shape[:-1])


def stack_frexp(lib, result, dtype):
    mantissa, exponent = result
    assert exponent.dtype == lib.int32
    return lib.stack([mantissa, exponent.to(dtype)])


CASES = [
    OpCase("sgn", lambda a: ember.sgn(a), np.sign, [[(3, 4)], [()]], dtypes=(np.float32, np.int64), grad=False,
           torch_fn=lambda a: torch.sgn(a)),
    OpCase("signbit", lambda a: a.signbit(), np.signbit, [[(3, 4)], [(5,)]], dtypes=(np.float32, np.float64, np.int64),
           grad=False, torch_fn=lambda a: torch.signbit(a)),
    OpCase("heaviside", lambda a, b: ember.heaviside(a, b), np.heaviside, [[(3, 4), (4,)], [(2, 3), (2, 3)]],
           dtypes=FLOATS, grad=False, domain=(-1, 1)),
    OpCase("heaviside_int", lambda a, b: a.heaviside(b), np.heaviside, [[(3, 4), (4,)]], dtypes=(np.int64,),
           grad=False, domain=(-1, 1), torch_fn=lambda a, b: torch.heaviside(a, b)),
    OpCase("gcd", lambda a, b: ember.gcd(a, b), np.gcd, [[(3, 4), (4,)], [(5,), (5,)], [(), ()]], dtypes=INTS,
           grad=False, domain=(-30, 30), torch_fn=lambda a, b: torch.gcd(a, b)),
    OpCase("lcm", lambda a, b: a.lcm(b), np.lcm, [[(3, 4), (4,)], [(2, 1), (1, 3)]], dtypes=INTS, grad=False,
           domain=(-12, 12), torch_fn=lambda a, b: torch.lcm(a, b)),
    OpCase("fmax", lambda a, b: ember.fmax(a, b), np.fmax, [[(3, 4), (4,)], [(), (2, 3)]],
           dtypes=(np.float32, np.float64, np.int64), torch_fn=lambda a, b: torch.fmax(a, b)),
    OpCase("fmin", lambda a, b: a.fmin(b), np.fmin, [[(3, 4), (3, 1)], [(5,), (5,)]],
           dtypes=(np.float32, np.int64), torch_fn=lambda a, b: torch.fmin(a, b)),
    OpCase("float_power", lambda a, b: ember.float_power(a, b), np.float_power, [[(3, 4), (4,)], [(), ()]],
           dtypes=FLOATS, domain=(0.5, 2.0), torch_fn=lambda a, b: torch.float_power(a, b)),
    OpCase("float_power_scalar", lambda a: a.float_power(3), lambda a: np.float_power(a, 3), [[(3, 4)]],
           dtypes=(np.float32, np.int64)),
    OpCase("deg2rad", lambda a: ember.deg2rad(a), np.deg2rad, [[(3, 4)], [()]],
           dtypes=(np.float32, np.float64, np.int64),
           domain=(-200, 200), rtol=1e-5, torch_fn=lambda a: torch.deg2rad(a)),
    OpCase("rad2deg", lambda a: a.rad2deg(), np.rad2deg, [[(3, 4)], [(0,)]], dtypes=(np.float32, np.int64),
           rtol=1e-5, torch_fn=lambda a: torch.rad2deg(a)),
    OpCase("sinc", lambda a: ember.sinc(a), np.sinc, [[(3, 4)], [()]], dtypes=FLOATS, rtol=1e-4, atol=1e-6,
           torch_fn=lambda a: torch.sinc(a)),
    OpCase("i0", lambda a: ember.i0(a), np.i0, [[(3, 4)], [()]], dtypes=FLOATS, domain=(-6, 6), rtol=1e-5,
           torch_fn=lambda a: torch.i0(a)),
    OpCase("i0_wide", lambda a: a.i0(), np.i0, [[(4, 5)]], dtypes=(np.float64,), domain=(-60, 60), rtol=1e-11,
           grad=False),
    OpCase("ldexp", lambda a, b: ember.ldexp(a, b), lambda a, b: a * np.float32(2.0) ** b, [[(3, 4), (4,)]],
           dtypes=FLOATS, domain=(-3, 3)),
    OpCase("frexp", lambda a: stack_frexp(ember, ember.frexp(a), a.dtype),
           lambda a: np.stack([np.frexp(a)[0], np.frexp(a)[1].astype(a.dtype)]), [[(3, 4)], [()]], dtypes=FLOATS,
           grad=False, domain=(-50, 50), torch_fn=lambda a: stack_frexp(torch, torch.frexp(a), a.dtype)),
    OpCase("frexp_mantissa", lambda a: a.frexp().mantissa, lambda a: np.frexp(a)[0], [[(3, 4)]], dtypes=(np.float64,)),
    OpCase("nextafter", lambda a, b: ember.nextafter(a, b), np.nextafter, [[(3, 4), (4,)], [(5,), (5,)]],
           dtypes=FLOATS, grad=False, rtol=0, atol=0, torch_fn=lambda a, b: torch.nextafter(a, b)),
    OpCase("mvlgamma", lambda a: ember.mvlgamma(a, 3), lambda a: np_mvlgamma(a, 3), [[(3, 4)], [(5,)]], dtypes=FLOATS,
           domain=(1.1, 4.0), rtol=1e-5, atol=1e-5, torch_fn=lambda a: torch.mvlgamma(a, 3)),
    OpCase("renorm", lambda a: ember.renorm(a, 2, 0, 1.0), lambda a: np_renorm(a, 2, 0, 1.0), [[(3, 4)], [(2, 3, 2)]],
           dtypes=FLOATS, rtol=1e-5, torch_fn=lambda a: torch.renorm(a, 2, 0, 1.0)),
    OpCase("renorm_p1_dim1", lambda a: a.renorm(1.5, 1, 2.0), lambda a: np_renorm(a, 1.5, 1, 2.0), [[(3, 4, 2)]],
           rtol=1e-5),
    OpCase("dist", lambda a, b: ember.dist(a, b), lambda a, b: np_dist(a, b, 2), [[(3, 4), (4,)], [(), ()]],
           dtypes=FLOATS, rtol=1e-5, torch_fn=lambda a, b: torch.dist(a, b)),
    OpCase("dist_p3", lambda a, b: a.dist(b, 3), lambda a, b: np_dist(a, b, 3), [[(3, 4), (3, 4)]], rtol=1e-5),
    OpCase("dist_inf", lambda a, b: a.dist(b, float("inf")), lambda a, b: np_dist(a, b, np.inf), [[(3, 4), (4,)]]),
    OpCase("nanmedian", lambda a: ember.nanmedian(e_with_nans(a), 1).values,
           lambda a: np_nanmedian_lower(with_nans(a), 1), [[(4, 7)], [(3, 6)]], dtypes=FLOATS),
    OpCase("nanmedian_dim0_keepdim", lambda a: a.nanmedian(0, keepdim=True).values,
           lambda a: np_nanmedian_lower(a, 0)[None], [[(5, 3)]], dtypes=(np.float32, np.int64)),
    OpCase("nanmedian_all", lambda a: ember.nanmedian(e_with_nans(a)),
           lambda a: np_nanmedian_lower(with_nans(a).ravel(), 0), [[(4, 5)], [(3,)]], dtypes=FLOATS),
    OpCase("nanquantile", lambda a: ember.nanquantile(e_with_nans(a), 0.3, dim=1),
           lambda a: np.nanquantile(with_nans(a), 0.3, axis=1).astype(a.dtype), [[(4, 7)]], dtypes=FLOATS,
           extra={"fuzz": False}),
    OpCase("nanquantile_q_tensor_lower",
           lambda a: a.nanquantile(ember.tensor([0.2, 0.9], dtype=a.dtype, device=a.device), dim=0,
                                   interpolation="lower"),
           lambda a: np.nanquantile(a, [0.2, 0.9], axis=0, method="lower"), [[(6, 3)]], dtypes=FLOATS,
           torch_fn=lambda a: torch.nanquantile(a, torch.tensor([0.2, 0.9], dtype=a.dtype), dim=0,
                                                interpolation="lower"),
           extra={"fuzz": False}),  # numpy gives an empty slice's quantiles another shape
    OpCase("nanquantile_all_midpoint", lambda a: ember.nanquantile(a, 0.5, interpolation="midpoint"),
           lambda a: np.nanquantile(a, 0.5, method="midpoint").astype(a.dtype), [[(3, 5)]]),
    OpCase("mode", lambda a: ember.mode((a * 2).round(), 1).values, lambda a: np_mode(np.round(a * 2), 1),
           [[(4, 7)], [(3, 2, 5)]], dtypes=FLOATS),
    OpCase("mode_int_dim0", lambda a: a.mode(0).values, lambda a: np_mode(a, 0), [[(6, 4)]], dtypes=INTS, grad=False,
           domain=(0, 3), torch_fn=lambda a: torch.mode(a, 0).values),
    OpCase("cov", lambda a: ember.cov(a), lambda a: np.cov(a), [[(3, 6)], [(7,)]], dtypes=FLOATS, rtol=1e-4, atol=1e-5,
           torch_fn=lambda a: torch.cov(a)),
    OpCase("cov_correction0", lambda a: a.cov(correction=0), lambda a: np.cov(a, ddof=0), [[(2, 5)]], rtol=1e-4,
           atol=1e-5),
    OpCase("cov_weights", lambda a: ember.cov(a, fweights=ember.tensor([1, 2, 0, 3], device=a.device),
                                              aweights=ember.tensor([0.5, 1.0, 2.0, 0.25], dtype=a.dtype,
                                                                     device=a.device)),
           lambda a: np.cov(a, fweights=[1, 2, 0, 3], aweights=[0.5, 1.0, 2.0, 0.25]), [[(3, 4)]], dtypes=FLOATS,
           rtol=1e-4, atol=1e-5, extra={"fuzz": False}),
    OpCase("corrcoef", lambda a: ember.corrcoef(a), lambda a: np.corrcoef(a), [[(3, 6)]], dtypes=FLOATS, rtol=1e-4,
           atol=1e-5, torch_fn=lambda a: torch.corrcoef(a)),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_signbit_sinc_heaviside_special_values():
    x = ember.tensor([-0.0, 0.0, NAN, -NAN, -1.0, float("inf")])
    assert ember.signbit(x).tolist() == [True, False, False, True, True, False]
    assert ember.signbit(ember.tensor([True, False])).tolist() == [False, False]
    z = make(np.array([0.0, 0.5]), requires_grad=True)
    out = ember.sinc(z)
    assert out.tolist()[0] == 1.0
    out.sum().backward()
    assert z.grad.tolist()[0] == 0.0 and np.isfinite(to_numpy(z.grad)).all()
    h = ember.heaviside(ember.tensor([-1.0, 0.0, 2.0]), ember.tensor([0.5]))
    assert h.tolist() == [0.0, 0.5, 1.0] and not h.requires_grad


def test_fmax_fmin_ignore_nan():
    a = ember.tensor([NAN, 2.0, NAN, 1.0])
    b = ember.tensor([1.5, NAN, NAN, 3.0])
    np.testing.assert_array_equal(ember.fmax(a, b).numpy(), [1.5, 2.0, NAN, 3.0])
    np.testing.assert_array_equal(ember.fmin(a, b).numpy(), [1.5, 2.0, NAN, 1.0])
    assert ember.fmax(ember.tensor([1, 2]), ember.tensor([1.5])).dtype == ember.float32


def test_gcd_lcm_edge_cases():
    a = ember.tensor([0, 0, -4, 9, 2 ** 40, 17])
    b = ember.tensor([0, 5, 6, -6, 2 ** 35 * 3, 0])
    assert ember.gcd(a, b).tolist() == list(np.gcd(a.numpy(), b.numpy()))
    assert ember.lcm(a[:4], b[:4]).tolist() == [0, 0, 12, 18]
    assert ember.gcd(ember.tensor([4], dtype=ember.int32), ember.tensor([6])).dtype == ember.int64


def test_nextafter_and_frexp_special_values():
    tiny32 = np.float32(1e-45)
    x = np.array([0.0, -0.0, 1.0, 1.0, 2.0, 0.5, tiny32, 3.4028235e38, np.inf, -np.inf, NAN, 1.0, 1e-40], np.float32)
    y = np.array([1.0, -1.0, 2.0, 0.0, 0.0, 1.0, 0.0, np.inf, 0.0, 0.0, 1.0, 1.0, 1.0], np.float32)
    np.testing.assert_array_equal(to_numpy(ember.nextafter(make(x), make(y))), np.nextafter(x, y))
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    xd[-1] = 1e-310  # a float64 subnormal
    np.testing.assert_array_equal(to_numpy(ember.nextafter(make(xd), make(yd))), np.nextafter(xd, yd))
    v = np.array([8.0, 0.3, 0.0, -5.0, 1e-40, 3e38, np.inf, -np.inf, NAN, 1.0, 0.5, -0.75], np.float32)
    m, e = ember.frexp(make(v))
    nm, ne = np.frexp(v)
    np.testing.assert_array_equal(to_numpy(m), nm)
    np.testing.assert_array_equal(to_numpy(e), ne)
    assert e.dtype == ember.int32 and type(ember.frexp(make(v))).__name__ == "frexp"
    small = np.array([1e-310, 5e-324, 1.7e308], np.float64)
    m, e = ember.frexp(make(small))
    np.testing.assert_array_equal(to_numpy(m), np.frexp(small)[0])
    np.testing.assert_array_equal(to_numpy(e), np.frexp(small)[1])


def test_i0_branches_meet_and_overflow_like_torch():
    x = np.array([0.0, 29.999, 30.0, 30.001, 100.0, 700.0, 800.0, -30.5])
    got = to_numpy(ember.i0(make(x)))
    np.testing.assert_allclose(got[:6], np.i0(x[:6]), rtol=1e-12)
    assert got[6] == np.inf and np.isclose(got[7], np.i0(-30.5), rtol=1e-12)
    assert ember.i0(ember.tensor([0, 1])).dtype == ember.float32


@pytest.mark.parametrize("name, reference", [
    ("hann_window", np.hanning), ("hamming_window", np.hamming), ("blackman_window", np.blackman),
    ("bartlett_window", np.bartlett), ("kaiser_window", lambda n: np.kaiser(n, 12.0)),
])
def test_windows(name, reference):
    fn = getattr(ember, name)
    for n in (0, 1, 2, 5, 8):
        assert_close(fn(n, periodic=False), reference(n).astype(np.float32), 1e-5, 1e-6, msg=f"{name}({n})")
        periodic = reference(n + 1)[:n] if n > 1 else np.ones(n)  # torch: a window of 1 is [1.]
        assert_close(fn(n), periodic.astype(np.float32), 1e-5, 1e-6, msg=f"{name}({n}) periodic")
        if torch is not None:
            assert_close(fn(n, dtype=ember.float64), getattr(torch, name)(n, dtype=torch.float64).numpy(), 1e-12, 1e-12)
    w = fn(4, dtype=ember.float64, requires_grad=True)
    assert w.dtype == ember.float64 and w.requires_grad and w.is_leaf
    with pytest.raises(RuntimeError, match=f"{name} expects floating point dtypes"):
        fn(4, dtype=ember.int64)
    with pytest.raises(RuntimeError, match=f"{name} requires non-negative window_length"):
        fn(-1)
    assert_close(ember.hamming_window(6, False, alpha=0.6, beta=0.4),
                 (0.6 - 0.4 * np.cos(2 * np.pi * np.arange(6) / 5)).astype(np.float32), 1e-6, 1e-6)
    assert_close(ember.kaiser_window(7, False, beta=4.0), np.kaiser(7, 4.0).astype(np.float32), 1e-5, 1e-6)


def test_nanmedian_mode_indices_and_named_tuples():
    a = np.array([[NAN, 2.0, 1.0, 3.0], [1.0, NAN, NAN, NAN], [4.0, 4.0, 5.0, NAN]])
    r = ember.nanmedian(make(a), 1)
    assert type(r).__name__ == "nanmedian" and r.values.tolist() == [2.0, 1.0, 4.0] and r.indices.tolist() == [1, 0, 1]
    assert np.isnan(ember.nanmedian(ember.tensor([NAN, NAN])).item())
    m = ember.tensor([[1, 2, 2, 1, 3], [3, 3, 1, 1, 0]]).mode(1)
    assert type(m).__name__ == "mode" and m.values.tolist() == [1, 1] and m.indices.tolist() == [3, 3]
    m0 = ember.mode(ember.tensor(4.0))
    assert m0.values.item() == 4.0 and m0.indices.item() == 0 and m0.values.shape == ()
    if torch is not None:
        x = np.random.default_rng(3).integers(0, 3, (4, 9))
        for dim in (0, 1):
            got, want = ember.mode(make(x), dim, keepdim=True), torch.mode(torch.from_numpy(x), dim, keepdim=True)
            np.testing.assert_array_equal(to_numpy(got.values), want.values.numpy())
            np.testing.assert_array_equal(to_numpy(got.indices), want.indices.numpy())
        t = torch.tensor(a)
        np.testing.assert_array_equal(to_numpy(ember.nanmedian(make(a), 1).indices),
                                      torch.nanmedian(t, 1).indices.numpy())


def test_gradients_flow_to_the_picked_elements():
    x = make(np.array([[3.0, 1.0, 2.0, 1.0]]), requires_grad=True)
    ember.mode(x, 1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0, 1.0]]
    y = make(np.array([[NAN, 2.0, 1.0, 3.0]]), requires_grad=True)
    ember.nanmedian(y, 1).values.sum().backward()
    assert y.grad.tolist() == [[0.0, 1.0, 0.0, 0.0]]


def test_errors_name_the_op():
    f = ember.ones(3)
    with pytest.raises(NotImplementedError, match="gcd"):
        ember.gcd(f, f)
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes"):
        ember.heaviside(f, ember.ones(3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="frexp: only supports floating-point"):
        ember.frexp(ember.ones(3, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="nextafter"):
        ember.nextafter(ember.ones(3, dtype=ember.int64), ember.ones(3, dtype=ember.int64))
    assert_close(ember.mvlgamma(ember.tensor([0.2]), 2), np_mvlgamma(np.array([0.2], np.float32), 2), 1e-5, 1e-5)
    with pytest.raises(RuntimeError, match="mvlgamma: p has to be greater than or equal to 1"):
        ember.mvlgamma(f, 0)
    with pytest.raises(RuntimeError, match="renorm: non-positive-norm not supported"):
        ember.renorm(ember.ones(2, 3), -1, 0, 1.0)
    with pytest.raises(RuntimeError, match="renorm: input needs at least 2 dimensions"):
        ember.renorm(f, 2, 0, 1.0)
    with pytest.raises(TypeError, match="ldexp"):
        ember.ldexp(f, 3)
    with pytest.raises(NotImplementedError, match="dist"):
        ember.dist(ember.ones(3, dtype=ember.int64), ember.ones(3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="nanquantile\\(\\) q values must be in the range"):
        ember.nanquantile(f, 1.5)
    with pytest.raises(ValueError, match="nanquantile\\(\\) interpolation must be one of"):
        ember.nanquantile(f, 0.5, interpolation="cubic")
    with pytest.raises(IndexError, match="mode\\(\\): Expected reduction dim 1 to have non-zero size"):
        ember.mode(ember.ones(2, 0), 1)
    with pytest.raises(RuntimeError, match="cov\\(\\): expected input to have two or fewer dimensions"):
        ember.cov(ember.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="cov\\(\\): expected fweights to have integral dtype"):
        ember.cov(ember.ones(2, 3), fweights=ember.ones(3))
    if torch is not None:  # the same exception types as torch
        for call in (lambda m: m.gcd(m.ones(3), m.ones(3)), lambda m: m.frexp(m.ones(3, dtype=m.int64)),
                     lambda m: m.renorm(m.ones(3), 2, 0, 1.0), lambda m: m.mvlgamma(m.ones(3), 0)):
            kinds = []
            for lib in (ember, torch):
                with pytest.raises(Exception) as info:
                    call(lib)
                kinds.append(info.type)
            assert issubclass(kinds[0], kinds[1]) or kinds[0] is kinds[1], kinds


def test_top_level_nn_aliases():
    a, b = ember.randn(3, 4), ember.randn(3, 4)
    assert_close(ember.cosine_similarity(a, b), ember.nn.functional.cosine_similarity(a, b))
    assert_close(ember.pairwise_distance(a, b), ember.nn.functional.pairwise_distance(a, b))
    assert_close(ember.polygamma(1, a), a.polygamma(1))


def test_dims_out_of_range_raise_index_error():
    with pytest.raises(IndexError, match="renorm: Dimension out of range"):
        ember.renorm(ember.ones(2, 3), 2, 5, 1.0)
    with pytest.raises(IndexError, match="mode: Dimension out of range"):
        ember.mode(ember.ones(3), 2)
    with pytest.raises(IndexError, match="index_reduce_: Dimension out of range"):
        ember.ones(3).index_reduce(1, ember.tensor([0]), ember.ones(1), "prod")
