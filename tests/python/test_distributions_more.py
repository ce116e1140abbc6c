"""More of ember.distributions: LowRankMultivariateNormal, the Gamma cdf
(regularized incomplete gamma), expand() on every distribution, and the
transformed families (HalfCauchy, Pareto, Weibull, InverseGamma, Kumaraswamy,
LogisticNormal) with FisherSnedecor and NegativeBinomial: against numpy
closed forms always, scipy.stats and torch where importable."""
import math

import numpy as np
import pytest

import ember
import ember.distributions as D
from harness import torch

try:
    import scipy.special as spspecial
    import scipy.stats as sps
except ImportError:
    sps = spspecial = None

CASES = []

lgamma = np.vectorize(math.lgamma)


def t64(values):
    return ember.tensor(np.asarray(values, dtype=np.float64))


def tt(values):
    return torch.tensor(np.asarray(values, dtype=np.float64))


def close(actual, expected, rtol=1e-9, atol=1e-12):
    actual = actual.detach().numpy() if isinstance(actual, ember.Tensor) else np.asarray(actual)
    expected = expected.detach().numpy() if hasattr(expected, "detach") else np.asarray(expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def test_lowrank_multivariate_normal():
    rng = np.random.default_rng(0)
    loc = rng.standard_normal((2, 4))
    W = rng.standard_normal((4, 2))
    diag = rng.uniform(0.5, 2.0, 4)
    cov = W @ W.T + np.diag(diag)
    d = D.LowRankMultivariateNormal(t64(loc), t64(W), t64(diag))
    assert d.batch_shape == (2,) and d.event_shape == (4,)
    x = rng.standard_normal(4)
    for i in range(2):
        diff = x - loc[i]
        want = -0.5 * (4 * math.log(2 * math.pi) + np.linalg.slogdet(cov)[1] + diff @ np.linalg.solve(cov, diff))
        close(d.log_prob(t64(x))[i], want, rtol=1e-10)
    close(d.covariance_matrix[0], cov, rtol=1e-12)
    close(d.precision_matrix[1], np.linalg.inv(cov), rtol=1e-9)
    close(d.scale_tril[0], np.linalg.cholesky(cov), rtol=1e-10)
    close(d.variance[0], np.diag(cov), rtol=1e-12)
    close(d.entropy(), [0.5 * np.linalg.slogdet(2 * math.pi * math.e * cov)[1]] * 2, rtol=1e-10)
    full = D.MultivariateNormal(t64(loc), covariance_matrix=t64(cov))
    close(d.log_prob(t64(rng.standard_normal((3, 2, 4)))).shape, (3, 2))
    other = D.MultivariateNormal(t64(np.zeros(4)), covariance_matrix=t64(np.eye(4) * 2))
    close(D.kl_divergence(d, other), D.kl_divergence(full, other), rtol=1e-10)
    close(D.kl_divergence(other, d), D.kl_divergence(other, full), rtol=1e-10)
    ember.manual_seed(0)
    s = d.sample((20000,)).numpy()
    np.testing.assert_allclose(np.cov(s[:, 1].T), cov, atol=0.15)
    w = t64(W).requires_grad_()
    D.LowRankMultivariateNormal(t64(loc), w, t64(diag)).rsample((3,)).sum().backward()
    assert w.grad is not None and w.grad.shape == (4, 2)
    with pytest.raises(ValueError, match="cov_factor"):
        D.LowRankMultivariateNormal(t64(loc), t64(np.ones((3, 2))), t64(diag))
    if torch is not None:
        td = torch.distributions.LowRankMultivariateNormal(tt(loc), tt(W), tt(diag))
        close(d.log_prob(t64(x)), td.log_prob(tt(x)), rtol=1e-10)
        close(d.precision_matrix, td.precision_matrix, rtol=1e-9)


def _gamma_cdf_series(a, x):
    """P(a, x) by its series in numpy (200 terms are plenty for the values below)."""
    n = np.arange(400)[:, None]
    return np.exp((a + n) * np.log(x) - x - lgamma(a + n + 1)).sum(0)


def test_gamma_cdf():
    a = np.array([0.5, 1.0, 3.0, 7.5, 20.0])
    x = np.array([0.2, 1.5, 2.0, 12.0, 18.0])
    d = D.Gamma(t64(a), t64(np.ones(5)))
    close(d.cdf(t64(x)), _gamma_cdf_series(a, x), rtol=1e-10)
    close(D.Gamma(t64(1.0), t64(2.0)).cdf(t64([0.0, 0.3, 5.0])), 1 - np.exp(-2 * np.array([0.0, 0.3, 5.0])),
          rtol=1e-12)
    close(D.Chi2(t64(2.0)).cdf(t64([1.0])), [1 - math.exp(-0.5)], rtol=1e-12)
    if spspecial is not None:
        a = np.array([0.05, 0.5, 2.5, 60.0, 400.0, 3000.0, 1e5])
        for q in (1e-6, 0.3, 0.9, 0.9999):
            x = spspecial.gammaincinv(a, q)
            close(D.Gamma(t64(a), t64(np.ones(7))).cdf(t64(x)), np.full(7, q), rtol=1e-9)
    with pytest.raises(ValueError, match="support"):
        d.cdf(t64(-np.ones(5)))


EXPANDABLE = [
    lambda: D.Normal(t64([0.0, 1.0]), t64([1.0, 2.0])),
    lambda: D.Bernoulli(t64([0.2, 0.7])),
    lambda: D.Categorical(t64([[0.2, 0.8], [0.5, 0.5]])),
    lambda: D.Gamma(t64([1.0, 2.0]), t64([1.0, 3.0])),
    lambda: D.Chi2(t64([1.0, 2.0])),
    lambda: D.Beta(t64([1.0, 2.0]), t64([1.0, 3.0])),
    lambda: D.Dirichlet(t64([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])),
    lambda: D.LogNormal(t64([0.0, 1.0]), t64([1.0, 2.0])),
    lambda: D.StudentT(t64([3.0, 4.0])),
    lambda: D.Poisson(t64([1.0, 2.0])),
    lambda: D.Binomial(t64([3.0, 3.0]), logits=t64([0.0, 1.0])),
    lambda: D.Multinomial(3, t64([[0.2, 0.8], [0.5, 0.5]])),
    lambda: D.MultivariateNormal(t64([[0.0, 1.0], [1.0, 0.0]]), scale_tril=t64(np.eye(2))),
    lambda: D.LowRankMultivariateNormal(t64([[0.0, 1.0], [1.0, 0.0]]), t64(np.ones((2, 1))), t64([1.0, 1.0])),
    lambda: D.RelaxedOneHotCategorical(t64(0.5), probs=t64([[0.2, 0.8], [0.5, 0.5]])),
    lambda: D.Independent(D.Normal(t64([0.0, 1.0]), t64([1.0, 2.0])), 0),
    lambda: D.MixtureSameFamily(D.Categorical(logits=t64([[0.0, 1.0], [1.0, 0.0]])),
                                D.Normal(t64([[0.0, 1.0], [1.0, 0.0]]), t64([[1.0, 1.0], [2.0, 2.0]]))),
    lambda: D.TransformedDistribution(D.Normal(t64([0.0, 1.0]), t64([1.0, 2.0])), [D.ExpTransform()]),
    lambda: D.Weibull(t64([1.0, 2.0]), t64([1.5, 0.5])),
    lambda: D.NegativeBinomial(t64([2.0, 3.0]), t64([0.3, 0.6])),
]


@pytest.mark.parametrize("make", EXPANDABLE, ids=lambda m: type(m()).__name__)
def test_expand(make):
    d = make()
    e = d.expand((3, 2))
    assert type(e) is type(d) and e.batch_shape == (3, 2) and e.event_shape == d.event_shape
    ember.manual_seed(0)
    x = e.sample()
    assert x.shape == (3, 2) + tuple(d.event_shape)
    close(e.log_prob(x), d.log_prob(x), rtol=1e-12)
    with pytest.raises(RuntimeError, match="cannot be expanded"):
        d.expand((3,))


# name, parameters, values, numpy log density, numpy mean, numpy variance
A, B = np.array([2.5, 3.0]), np.array([2.0, 0.7])
X = np.array([0.3, 4.0])
FAMILIES = [
    ("HalfCauchy", (B,), X, np.log(2 / (math.pi * B * (1 + (X / B) ** 2))), None, None),
    ("Pareto", (B / 4, A), X + 0.5, np.log(A) + A * np.log(B / 4) - (A + 1) * np.log(X + 0.5),
     A * B / 4 / (A - 1), (B / 4) ** 2 * A / ((A - 1) ** 2 * (A - 2))),
    ("Weibull", (B, A), X, np.log(A / B) + (A - 1) * np.log(X / B) - (X / B) ** A,
     B * np.exp(lgamma(1 + 1 / A)), B ** 2 * (np.exp(lgamma(1 + 2 / A)) - np.exp(2 * lgamma(1 + 1 / A)))),
    ("InverseGamma", (A, B), X, A * np.log(B) - lgamma(A) - (A + 1) * np.log(X) - B / X,
     B / (A - 1), B ** 2 / ((A - 1) ** 2 * (A - 2))),
    ("Kumaraswamy", (A, B), X / 5, np.log(A * B) + (A - 1) * np.log(X / 5) + (B - 1) * np.log1p(-(X / 5) ** A),
     B * np.exp(lgamma(1 + 1 / A) + lgamma(B) - lgamma(1 + B + 1 / A)), None),
    ("FisherSnedecor", (A + 2, A + 3), X,
     lgamma((2 * A + 5) / 2) - lgamma((A + 2) / 2) - lgamma((A + 3) / 2) + (A + 2) / 2 * np.log((A + 2) / (A + 3))
     + ((A + 2) / 2 - 1) * np.log(X) - (2 * A + 5) / 2 * np.log1p((A + 2) / (A + 3) * X),
     (A + 3) / (A + 1), 2 * (A + 3) ** 2 * (2 * A + 3) / ((A + 2) * (A + 1) ** 2 * (A - 1))),
    ("NegativeBinomial", (A, B / 4), np.array([0.0, 4.0]),
     lgamma(A + [0.0, 4.0]) - lgamma(A) - lgamma(np.array([1.0, 5.0])) + A * np.log1p(-B / 4)
     + np.array([0.0, 4.0]) * np.log(B / 4), A * B / 4 / (1 - B / 4), A * B / 4 / (1 - B / 4) ** 2),
]


@pytest.mark.parametrize("name,params,values,logpdf,mean,var", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_families_against_closed_forms(name, params, values, logpdf, mean, var):
    d = getattr(D, name)(*[t64(p) for p in params])
    assert d.batch_shape == (2,)
    close(d.log_prob(t64(values)), logpdf, rtol=1e-9)
    if mean is not None:
        close(d.mean, mean, rtol=1e-9)
    if var is not None:
        close(d.variance, var, rtol=1e-9)
    ember.manual_seed(1)
    s = d.sample((40000,)).numpy()
    assert s.shape == (40000, 2) and bool(d.support.check(t64(s)).all())
    if name == "HalfCauchy":
        np.testing.assert_allclose(np.median(s, 0), B, rtol=0.05)  # the median of |Cauchy(0, s)| is s
    elif var is not None:
        np.testing.assert_allclose(s.mean(0), mean, rtol=0.05, atol=0.02)
    if d.has_rsample:
        p = [t64(v).requires_grad_() for v in params]
        getattr(D, name)(*p).rsample((4,)).sum().backward()
        assert all(q.grad is not None and np.isfinite(q.grad.numpy()).all() for q in p)


def test_families_entropy_and_cdf():
    close(D.HalfCauchy(t64(B)).entropy(), np.log(2 * math.pi * B))
    close(D.HalfCauchy(t64(B)).cdf(t64(B)), [0.5, 0.5])
    close(D.Pareto(t64(1.0), t64(A)).cdf(t64([2.0, 2.0])), 1 - 0.5 ** A, rtol=1e-12)
    close(D.Pareto(t64(B), t64(A)).entropy(), np.log(B / A) + 1 / A + 1, rtol=1e-12)
    close(D.Weibull(t64(B), t64(A)).cdf(t64(X)), 1 - np.exp(-(X / B) ** A), rtol=1e-12)
    close(D.Weibull(t64(B), t64(A)).icdf(t64([0.3, 0.8])), B * (-np.log1p(-np.array([0.3, 0.8]))) ** (1 / A),
          rtol=1e-12)
    mode = D.Kumaraswamy(t64(A), t64(B)).mode.numpy()  # B[1] < 1: the density is unbounded at 1, no mode
    close(mode[0], ((A[0] - 1) / (A[0] * B[0] - 1)) ** (1 / A[0]), rtol=1e-12)
    assert math.isnan(mode[1])
    close(D.Kumaraswamy(t64(A), t64(B)).cdf(t64([0.5, 0.5])), 1 - (1 - 0.5 ** A) ** B, rtol=1e-12)
    # InverseGamma's cdf: 1 - P(a, b / x) (the Gamma cdf at 1 / x, reversed by the decreasing transform)
    ig = D.InverseGamma(t64([2.0]), t64([3.0]))
    close(ig.cdf(t64([1.5])), 1 - D.Gamma(t64([2.0]), t64([3.0])).cdf(t64([1 / 1.5])).numpy(), rtol=1e-12)
    ln = D.LogisticNormal(t64([0.0, 0.0]), t64([1.0, 1.0]))
    assert ln.event_shape == (3,)
    draw = ln.sample((5,))
    close(draw.sum(-1), np.ones(5), rtol=1e-12)
    z = np.array([0.3, -0.2])
    y = D.StickBreakingTransform()(t64(z))
    # the stick-breaking map of a standard normal vector: density of z over the transform's Jacobian
    want = (-0.5 * z ** 2 - 0.5 * math.log(2 * math.pi)).sum() - \
        D.StickBreakingTransform().log_abs_det_jacobian(t64(z), y).item()
    close(ln.log_prob(y), want, rtol=1e-10)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_families_against_torch():
    T = torch.distributions
    for name, params, values, *_ in FAMILIES:
        e = getattr(D, name)(*[t64(p) for p in params])
        t = getattr(T, name)(*[tt(p) for p in params])
        close(e.log_prob(t64(values)), t.log_prob(tt(values)), rtol=1e-9)
        for attr in ("mean", "variance", "mode"):
            if name == "Kumaraswamy" and attr == "mode":
                continue  # torch's formula gives NaN for concentration0 > 1; ours is checked in closed form below
            close(getattr(e, attr), getattr(t, attr), rtol=1e-9)
        if name not in ("FisherSnedecor", "NegativeBinomial"):
            close(e.entropy(), t.entropy(), rtol=1e-9)
    e = D.LogisticNormal(t64([0.5, 3.0]), t64([2.0, 0.7]))
    t = T.LogisticNormal(tt([0.5, 3.0]), tt([2.0, 0.7]))
    close(e.log_prob(t64([0.3, 0.5, 0.2])), t.log_prob(tt([0.3, 0.5, 0.2])), rtol=1e-9)
    close(D.Gamma(t64(A), t64(B)).cdf(t64(X)), T.Gamma(tt(A), tt(B)).cdf(tt(X)), rtol=1e-9)


@pytest.mark.skipif(sps is None, reason="scipy is not installed")
def test_families_against_scipy():
    close(D.Weibull(t64(B), t64(A)).entropy(), [sps.weibull_min(a, scale=b).entropy() for a, b in zip(A, B)],
          rtol=1e-9)
    close(D.InverseGamma(t64(A), t64(B)).entropy(), [sps.invgamma(a, scale=b).entropy() for a, b in zip(A, B)],
          rtol=1e-9)
    close(D.FisherSnedecor(t64(A), t64(B + 5)).log_prob(t64(X)),
          [sps.f(a, b + 5).logpdf(x) for a, b, x in zip(A, B, X)], rtol=1e-9)
    close(D.Pareto(t64(B), t64(A)).entropy(), [sps.pareto(a, scale=b).entropy() for a, b in zip(A, B)], rtol=1e-9)


def test_enumerate_support_and_straight_through():
    probs = t64([[0.2, 0.8], [0.5, 0.5]])
    assert D.Bernoulli(t64([0.2, 0.7])).enumerate_support().tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert D.Bernoulli(t64([0.2, 0.7])).enumerate_support(expand=False).shape == (2, 1)
    assert D.Categorical(probs).enumerate_support().tolist() == [[0, 0], [1, 1]]
    support = D.OneHotCategorical(probs).enumerate_support()
    assert support.shape == (2, 2, 2) and support[1, 0].tolist() == [0.0, 1.0]
    assert D.Binomial(t64([2.0, 2.0]), t64([0.5, 0.5])).enumerate_support().shape == (3, 2)
    assert D.Bernoulli(t64(0.5)).has_enumerate_support and not D.Normal(t64(0.0), t64(1.0)).has_enumerate_support
    with pytest.raises(NotImplementedError):
        D.Normal(t64(0.0), t64(1.0)).enumerate_support()
    p = t64([0.2, 0.3, 0.5]).requires_grad_()
    d = D.OneHotCategoricalStraightThrough(p)
    ember.manual_seed(3)
    draw = d.rsample((4,))
    assert d.has_rsample and draw.requires_grad
    assert ((draw.detach() == 0) | (draw.detach() == 1)).all() and (draw.detach().sum(-1) == 1).all()
    (draw * t64([1.0, 2.0, 3.0])).sum().backward()
    close(p.grad, 4 * np.array([1.0, 2.0, 3.0]) - 4 * (np.array([0.2, 0.3, 0.5]) * [1.0, 2.0, 3.0]).sum(), rtol=1e-10)


def test_cat_and_stack_transforms():
    x = np.random.default_rng(4).standard_normal((2, 5))
    cat = D.CatTransform([D.ExpTransform(), D.AffineTransform(1.0, 2.0)], dim=1, lengths=[2, 3])
    y = cat(t64(x))
    close(y, np.concatenate([np.exp(x[:, :2]), 1 + 2 * x[:, 2:]], 1), rtol=1e-12)
    close(cat.inv(y), x, rtol=1e-12)
    close(cat.log_abs_det_jacobian(t64(x), y), np.concatenate([x[:, :2], np.full((2, 3), np.log(2.0))], 1),
          rtol=1e-12)
    stack = D.StackTransform([D.ExpTransform(), D.SigmoidTransform()], dim=0)
    y = stack(t64(x))
    close(y, np.stack([np.exp(x[0]), 1 / (1 + np.exp(-x[1]))]), rtol=1e-12)
    close(stack.inv(y), x, rtol=1e-9)
    with pytest.raises(ValueError):
        stack(t64(np.zeros((3, 5))))
    c = D.constraints.cat([D.constraints.positive, D.constraints.unit_interval], 1, [2, 3])
    assert bool(c.check(D.biject_to(c)(t64(x))).all())
    s = D.constraints.stack([D.constraints.positive, D.constraints.interval(-1.0, 1.0)], 0)
    assert bool(s.check(D.transform_to(s)(t64(x))).all())
    if torch is not None:
        T = torch.distributions.transforms
        tc = T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=1, lengths=[2, 3])
        close(cat.log_abs_det_jacobian(t64(x), cat(t64(x))), tc.log_abs_det_jacobian(tt(x), tc(tt(x))), rtol=1e-12)


def _trapz(y, x):
    return ((y[1:] + y[:-1]) * np.diff(x) / 2).sum()


def test_von_mises():
    loc, k = np.array([0.5, -1.0, 2.0]), np.array([2.0, 0.3, 20.0])
    d = D.VonMises(t64(loc), t64(k))
    x = np.array([0.1, 3.0, 2.1])
    close(d.log_prob(t64(x)), k * np.cos(x - loc) - np.log(2 * math.pi * np.i0(k)), rtol=1e-10)
    grid = np.linspace(-math.pi, math.pi, 20001)
    for i in range(3):
        dens = np.exp(k[i] * np.cos(grid))
        want = 1 - _trapz(np.cos(grid) * dens, grid) / _trapz(dens, grid)  # 1 - E[cos(x - loc)]
        close(d.variance[i], want, rtol=1e-7)
        close(_trapz(np.exp(D.VonMises(t64(0.0), t64(k[i])).log_prob(t64(grid)).numpy()), grid), 1.0, rtol=1e-7)
    ember.manual_seed(5)
    s = d.sample((40000,)).numpy()
    assert s.shape == (40000, 3) and (s >= -math.pi).all() and (s < math.pi).all()
    resultant = np.exp(1j * s).mean(0)
    # the mean angle's standard error is about 1 / (sqrt(n) * |resultant|)
    assert (np.abs(np.angle(resultant) - loc) <= 4 / (200 * (1 - d.variance.numpy()))).all()
    close(np.abs(resultant), 1 - d.variance.numpy(), atol=0.01)
    # tiny concentrations are nearly uniform on the circle
    u = D.VonMises(t64(0.0), t64(1e-7)).sample((20000,)).numpy()
    assert abs(u.mean()) < 0.05 and abs(u.var() - math.pi ** 2 / 3) < 0.1


def test_continuous_bernoulli():
    p = np.array([0.2, 0.4995, 0.7, 0.9])
    d = D.ContinuousBernoulli(t64(p))
    x = np.array([0.1, 0.3, 0.5, 0.95])
    log_c = np.log(2 * np.arctanh(1 - 2 * p) / (1 - 2 * p))
    close(d.log_prob(t64(x)), log_c + x * np.log(p) + (1 - x) * np.log1p(-p), rtol=1e-6)
    grid = np.linspace(0, 1, 20001)
    for i in range(4):
        dens = np.exp(D.ContinuousBernoulli(t64(p[i])).log_prob(t64(grid)).numpy())
        close(_trapz(dens, grid), 1.0, rtol=1e-6)
        mean = _trapz(grid * dens, grid)
        close(d.mean[i], mean, rtol=1e-6)
        close(d.variance[i], _trapz((grid - mean) ** 2 * dens, grid), rtol=1e-5)
        close(d.entropy()[i], -_trapz(dens * np.log(dens), grid), rtol=1e-6)
    close(d.cdf(d.icdf(t64([0.1, 0.3, 0.6, 0.9]))), [0.1, 0.3, 0.6, 0.9], rtol=1e-9)
    prob = t64([0.3]).requires_grad_()
    D.ContinuousBernoulli(prob).rsample((5,)).sum().backward()
    assert prob.grad is not None
    with pytest.raises(ValueError):
        D.ContinuousBernoulli(t64([1.5]))
    if torch is not None:
        t = torch.distributions.ContinuousBernoulli(tt(p))
        close(d.log_prob(t64(x)), t.log_prob(tt(x)), rtol=1e-9)
        close(d.mean, t.mean, rtol=1e-9)
        close(d.variance, t.variance, rtol=1e-9)
        close(d.entropy(), t.entropy(), rtol=1e-9)
        close(d.cdf(t64(x)), t.cdf(tt(x)), rtol=1e-9)


def test_corr_cholesky_and_positive_definite_transforms():
    x = np.random.default_rng(6).standard_normal((2, 6))
    t = D.CorrCholeskyTransform()
    y = t(t64(x))
    assert y.shape == (2, 4, 4) and t.forward_shape((2, 6)) == (2, 4, 4) and t.inverse_shape((2, 4, 4)) == (2, 6)
    yn = y.numpy()
    close(np.linalg.norm(yn, axis=-1), np.ones((2, 4)), rtol=1e-12)
    assert np.allclose(np.triu(yn, 1), 0) and (np.diagonal(yn, axis1=-2, axis2=-1) > 0).all()
    assert bool(D.constraints.corr_cholesky.check(y).all())
    close(t.inv(y), x, rtol=1e-9)
    # log|det| of x -> the strictly lower entries of y (its free coordinates), by finite differences
    rows, cols = np.tril_indices(4, -1)
    for row in x:
        jac = np.zeros((6, 6))
        for j in range(6):
            e = np.zeros(6)
            e[j] = 1e-6
            jac[:, j] = (t(t64(row + e)).numpy()[rows, cols] - t(t64(row - e)).numpy()[rows, cols]) / 2e-6
        close(t.log_abs_det_jacobian(t64(row), t(t64(row))), np.linalg.slogdet(jac)[1], rtol=1e-6)
    assert isinstance(D.biject_to(D.constraints.corr_cholesky), D.CorrCholeskyTransform)
    m = np.random.default_rng(7).standard_normal((2, 3, 3))
    pd = D.transform_to(D.constraints.positive_definite)(t64(m))
    assert bool(D.constraints.positive_definite.check(pd).all())
    close(D.PositiveDefiniteTransform()(D.PositiveDefiniteTransform().inv(pd)), pd.numpy(), rtol=1e-10)


def test_lkj_cholesky():
    eta = np.array([0.5, 2.0])
    d = D.LKJCholesky(3, t64(eta))
    assert d.batch_shape == (2,) and d.event_shape == (3, 3)
    ember.manual_seed(8)
    s = d.sample((8000,))
    assert bool(D.constraints.corr_cholesky.check(s).all())
    corr = s.numpy() @ np.swapaxes(s.numpy(), -1, -2)
    # each off-diagonal correlation is a (shifted) Beta(eta + (d - 2)/2, same): variance 1 / (2 eta + d - 1)
    # (torch's sampler fails this for the rows after the second; see lkj_cholesky.py)
    for i, j in ((0, 1), (0, 2), (1, 2)):
        close(corr[:, :, i, j].var(0), 1 / (2 * eta + 2), rtol=0.08)
    s4 = D.LKJCholesky(4, t64(1.5)).sample((8000,)).numpy()
    corr4 = s4 @ np.swapaxes(s4, -1, -2)
    rows, cols = np.triu_indices(4, 1)
    close(corr4[:, rows, cols].var(0), np.full(6, 1 / (3 + 3)), rtol=0.08)
    # dim 2: the density of the one correlation r is proportional to (1 - r^2)^(eta - 1) and integrates to 1
    r = np.linspace(-1 + 1e-9, 1 - 1e-9, 200001)
    factors = np.zeros((len(r), 2, 2))
    factors[:, 0, 0] = 1
    factors[:, 1, 0] = r
    factors[:, 1, 1] = np.sqrt(1 - r ** 2)
    for conc in (1.0, 3.0):
        dens = np.exp(D.LKJCholesky(2, t64(conc)).log_prob(t64(factors)).numpy())
        close(_trapz(dens, r), 1.0, rtol=1e-5)
        close(dens[len(r) // 2] / dens[len(r) // 4], (1 - r[len(r) // 4] ** 2) ** (1 - conc), rtol=1e-6)
    with pytest.raises(ValueError, match="dim"):
        D.LKJCholesky(1)
    if torch is not None:
        t = torch.distributions.LKJCholesky(3, tt(eta))
        close(d.log_prob(s[:5]), t.log_prob(tt(s[:5].numpy())), rtol=1e-9)
        tc = torch.distributions.transforms.CorrCholeskyTransform()
        x = np.random.default_rng(9).standard_normal(6)
        close(D.CorrCholeskyTransform().log_abs_det_jacobian(t64(x), D.CorrCholeskyTransform()(t64(x))),
              tc.log_abs_det_jacobian(tt(x), tc(tt(x))), rtol=1e-10)


def _log_multigamma(a, p):
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a + (1 - j) / 2) for j in range(1, p + 1))


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart(kind):
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])
    given = {"covariance_matrix": cov, "precision_matrix": np.linalg.inv(cov),
             "scale_tril": np.linalg.cholesky(cov)}[kind]
    df = np.array([4.0, 6.5])
    d = D.Wishart(t64(df), **{kind: t64(given)})
    assert d.batch_shape == (2,) and d.event_shape == (3, 3)
    v = np.random.default_rng(10).standard_normal((3, 5))
    X = v @ v.T / 5 + 0.1 * np.eye(3)
    for i, nu in enumerate(df):
        want = ((nu - 4) / 2 * np.linalg.slogdet(X)[1] - np.trace(np.linalg.solve(cov, X)) / 2
                - nu * 3 / 2 * math.log(2) - nu / 2 * np.linalg.slogdet(cov)[1] - _log_multigamma(nu / 2, 3))
        close(d.log_prob(t64(X))[i], want, rtol=1e-10)
    close(d.mean, df[:, None, None] * cov, rtol=1e-10)
    close(d.variance, df[:, None, None] * (cov ** 2 + np.outer(np.diag(cov), np.diag(cov))), rtol=1e-10)
    close(d.covariance_matrix[0], cov, rtol=1e-10)
    ember.manual_seed(11)
    s = d.sample((20000,)).numpy()
    assert bool(D.constraints.positive_definite.check(t64(s[:50])).all())
    close(s.mean(0), d.mean.numpy(), rtol=0.05, atol=0.05)
    close(s.var(0), d.variance.numpy(), rtol=0.12)
    nu = t64([4.0]).requires_grad_()
    D.Wishart(nu, t64(cov)).rsample((20000,)).mean(0).sum().backward()
    close(nu.grad, [cov.sum()], rtol=0.05)  # d E[X] / d df = covariance
    with pytest.raises(ValueError, match="df"):
        D.Wishart(t64(1.5), t64(cov))
    if sps is not None:
        close(d.log_prob(t64(X)), [sps.wishart(nu, cov).logpdf(X) for nu in df], rtol=1e-9)
        close(d.entropy(), [sps.wishart(nu, cov).entropy() for nu in df], rtol=1e-9)
    if torch is not None:
        t = torch.distributions.Wishart(tt(df), **{kind: tt(given)})
        close(d.log_prob(t64(X)), t.log_prob(tt(X)), rtol=1e-9)
        close(d.entropy(), t.entropy(), rtol=1e-9)


def test_generalized_pareto():
    loc, scale, conc = np.array([0.1, 0.0, -1.0]), np.array([2.0, 1.0, 0.5]), np.array([0.4, 0.0, -0.3])
    d = D.GeneralizedPareto(t64(loc), t64(scale), t64(conc))
    x = np.array([1.5, 0.7, -0.5])
    z = (x - loc) / scale
    logpdf = np.where(conc == 0, -z, -(1 / np.where(conc == 0, 1, conc) + 1) * np.log1p(conc * z)) - np.log(scale)
    close(d.log_prob(t64(x)), logpdf, rtol=1e-12)
    survival = np.where(conc == 0, np.exp(-z), (1 + conc * z) ** (-1 / np.where(conc == 0, 1, conc)))
    close(d.cdf(t64(x)), 1 - survival, rtol=1e-12)
    close(d.icdf(d.cdf(t64(x))), x, rtol=1e-10)
    close(d.mean, loc + scale / (1 - conc), rtol=1e-12)
    close(d.variance, scale ** 2 / ((1 - conc) ** 2 * (1 - 2 * conc)), rtol=1e-12)
    close(d.entropy(), np.log(scale) + conc + 1, rtol=1e-12)
    assert d.support.check(t64([100.0, 100.0, 1.0])).tolist() == [True, True, False]  # upper bound -1 + 0.5/0.3
    ember.manual_seed(12)
    s = d.sample((40000,)).numpy()
    close(s.mean(0), loc + scale / (1 - conc), rtol=0.05, atol=0.03)
    if sps is not None:
        close(d.log_prob(t64(x)), [sps.genpareto(c, l, s).logpdf(v) for c, l, s, v in zip(conc, loc, scale, x)],
              rtol=1e-9)
    if torch is not None:
        # float32: torch's GeneralizedPareto compares its concentration with a float32 zero, refusing float64
        t = torch.distributions.GeneralizedPareto(tt(loc).float(), tt(scale).float(), tt(conc).float())
        close(d.log_prob(t64(x)), t.log_prob(tt(x).float()), rtol=1e-5)
        close(d.cdf(t64(x)), t.cdf(tt(x).float()), rtol=1e-5)
        close(d.entropy(), t.entropy(), rtol=1e-5)


def test_exponential_family_entropy_by_bregman_identity():
    cases = [D.Normal(t64([0.5, -1.0]), t64([2.0, 0.3])), D.Bernoulli(t64([0.2, 0.7])),
             D.Exponential(t64([0.5, 3.0])), D.Gamma(t64([0.5, 3.0]), t64([2.0, 0.7])), D.Chi2(t64([1.5, 4.0])),
             D.Beta(t64([0.5, 3.0]), t64([2.0, 0.7])), D.Dirichlet(t64([[0.5, 3.0, 1.2], [1.0, 1.0, 1.0]]))]
    for d in cases:
        assert isinstance(d, D.ExponentialFamily)
        close(D.ExponentialFamily.entropy(d), d.entropy(), rtol=1e-10)
    with pytest.raises(NotImplementedError):
        D.ExponentialFamily.entropy(D.Poisson(t64([1.0])))  # no closed E[log h(x)] (as in torch)


def test_utils():
    from ember.distributions import utils
    probs = t64([[0.2, 0.8], [0.0, 1.0]])
    close(utils.logits_to_probs(utils.probs_to_logits(probs)), [[0.2, 0.8], [0.0, 1.0]], atol=1e-15)
    close(utils.probs_to_logits(t64([0.25]), is_binary=True), [math.log(1 / 3)], rtol=1e-12)
    close(utils.logits_to_probs(t64([0.0]), is_binary=True), [0.5])
    assert np.isfinite(utils.probs_to_logits(t64([0.0, 1.0]), is_binary=True).numpy()).all()
    a, b = utils.broadcast_all(t64([1.0, 2.0]), 3.0)
    assert b.shape == (2,) and b.dtype == ember.float64
    close(utils.vec_to_tril_matrix(t64([1.0, 2.0, 3.0])), [[1.0, 0.0], [2.0, 3.0]])
    close(utils.tril_matrix_to_vec(t64([[1.0, 9.0], [2.0, 3.0]])), [1.0, 2.0, 3.0])
    calls = []

    class Thing:
        @utils.lazy_property
        def value(self):
            calls.append(1)
            return 42
    thing = Thing()
    assert thing.value == 42 and thing.value == 42 and len(calls) == 1
