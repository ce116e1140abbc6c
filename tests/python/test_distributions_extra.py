"""ember.distributions beyond the first set: densities, moments, entropies,
cdf/icdf against closed forms written in numpy (always), scipy.stats and
torch.distributions (where importable); sample statistics of every sampler;
reparameterized gradients (Gamma's implicit gradient included); transforms,
constraints, biject_to/transform_to; KL pairs; validate_args errors."""
import math

import numpy as np
import pytest

import ember
import ember.distributions as D
from ember.distributions import constraints, transforms
from harness import torch

try:
    import scipy.stats as sps
    import scipy.special as spspecial
except ImportError:  # the closed forms below still run
    sps = spspecial = None

CASES = []

lgamma = np.vectorize(math.lgamma)
digamma_np = None if spspecial is None else spspecial.digamma


def t64(values):
    return ember.tensor(np.asarray(values, dtype=np.float64))


def tt(values):
    return torch.tensor(np.asarray(values, dtype=np.float64))


def close(actual, expected, rtol=1e-9, atol=1e-12):
    actual = actual.detach().numpy() if isinstance(actual, ember.Tensor) else np.asarray(actual)
    expected = expected.detach().numpy() if hasattr(expected, "detach") else np.asarray(expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# name, parameters, values to score, numpy log density (of those values), numpy mean, numpy variance
A, B = np.array([0.5, 3.0]), np.array([2.0, 0.7])
X = np.array([0.3, 4.0])
U = np.array([0.3, 0.9])
K = np.array([0.0, 4.0])
UNIVARIATE = [
    ("Gamma", (A, B), X,
     A * np.log(B) + (A - 1) * np.log(X) - B * X - lgamma(A), A / B, A / B ** 2),
    ("Chi2", (A,), X,
     (A / 2) * np.log(0.5) + (A / 2 - 1) * np.log(X) - 0.5 * X - lgamma(A / 2), A, 2 * A),
    ("Beta", (A, B), U,
     (A - 1) * np.log(U) + (B - 1) * np.log(1 - U) + lgamma(A + B) - lgamma(A) - lgamma(B),
     A / (A + B), A * B / ((A + B) ** 2 * (A + B + 1))),
    ("LogNormal", (A - 1, B), X,
     -np.log(X * B * math.sqrt(2 * math.pi)) - (np.log(X) - (A - 1)) ** 2 / (2 * B ** 2),
     np.exp(A - 1 + B ** 2 / 2), (np.exp(B ** 2) - 1) * np.exp(2 * (A - 1) + B ** 2)),
    ("HalfNormal", (B,), X,
     0.5 * math.log(2 / math.pi) - np.log(B) - X ** 2 / (2 * B ** 2), B * math.sqrt(2 / math.pi),
     B ** 2 * (1 - 2 / math.pi)),
    ("StudentT", (A + 2, A - 1, B), X,
     lgamma((A + 3) / 2) - lgamma((A + 2) / 2) - 0.5 * np.log((A + 2) * math.pi) - np.log(B)
     - (A + 3) / 2 * np.log1p(((X - A + 1) / B) ** 2 / (A + 2)), A - 1, B ** 2 * (A + 2) / A),
    ("Cauchy", (A, B), X, -np.log(math.pi * B * (1 + ((X - A) / B) ** 2)), None, None),
    ("Gumbel", (A, B), X, -np.log(B) - (X - A) / B - np.exp(-(X - A) / B),
     A + B * 0.5772156649015329, math.pi ** 2 / 6 * B ** 2),
    ("Poisson", (A,), K, K * np.log(A) - A - lgamma(K + 1), A, A),
    ("Binomial", (np.array([5.0, 5.0]), U), K,
     lgamma(6) - lgamma(K + 1) - lgamma(6 - K) + K * np.log(U) + (5 - K) * np.log(1 - U), 5 * U, 5 * U * (1 - U)),
    ("Geometric", (U,), K, K * np.log(1 - U) + np.log(U), 1 / U - 1, (1 - U) / U ** 2),
]


@pytest.mark.parametrize("name,params,values,logpdf,mean,var", UNIVARIATE, ids=[r[0] for r in UNIVARIATE])
def test_univariate_against_closed_forms(name, params, values, logpdf, mean, var):
    d = getattr(D, name)(*[t64(p) for p in params])
    assert d.batch_shape == (2,) and d.event_shape == ()
    close(d.log_prob(t64(values)), logpdf, rtol=1e-10)
    if mean is not None:
        close(d.mean, mean, rtol=1e-10)
        close(d.variance, var, rtol=1e-10)
        close(d.stddev, np.sqrt(var), rtol=1e-10)


SCIPY = {
    "Gamma": lambda a, b: sps.gamma(a, scale=1 / b),
    "Chi2": lambda a: sps.chi2(a),
    "Beta": lambda a, b: sps.beta(a, b),
    "LogNormal": lambda m, s: sps.lognorm(s, scale=np.exp(m)),
    "HalfNormal": lambda s: sps.halfnorm(scale=s),
    "StudentT": lambda df, m, s: sps.t(df, m, s),
    "Cauchy": lambda m, s: sps.cauchy(m, s),
    "Gumbel": lambda m, s: sps.gumbel_r(m, s),
}


@pytest.mark.skipif(sps is None, reason="scipy is not installed")
@pytest.mark.parametrize("name", sorted(SCIPY))
def test_continuous_against_scipy(name):
    params = next(r[1] for r in UNIVARIATE if r[0] == name)
    values = next(r[2] for r in UNIVARIATE if r[0] == name)
    d = getattr(D, name)(*[t64(p) for p in params])
    ref = [SCIPY[name](*[p[i] for p in params]) for i in range(2)]
    close(d.log_prob(t64(values)), [r.logpdf(v) for r, v in zip(ref, values)], rtol=1e-9)
    close(d.entropy(), [r.entropy() for r in ref], rtol=1e-8)
    for method, arg, probe in (("cdf", values, "cdf"), ("icdf", [0.2, 0.7], "ppf")):
        try:
            got = getattr(d, method)(t64(arg))
        except NotImplementedError:
            continue
        close(got, [getattr(r, probe)(a) for r, a in zip(ref, arg)], rtol=1e-8)


@pytest.mark.skipif(sps is None, reason="scipy is not installed")
def test_discrete_entropy_against_scipy():
    close(D.Binomial(t64([5.0, 5.0]), t64(U)).entropy(), [sps.binom(5, p).entropy() for p in U], rtol=1e-9)
    close(D.Geometric(t64(U)).entropy(), [sps.geom(p).entropy() for p in U], rtol=1e-9)
    probs = np.array([0.2, 0.3, 0.5])
    close(D.Multinomial(4, t64(probs)).entropy(), sps.multinomial(4, probs).entropy(), rtol=1e-9)
    close(D.Dirichlet(t64([0.5, 3.0, 1.2])).entropy(), sps.dirichlet([0.5, 3.0, 1.2]).entropy(), rtol=1e-9)


def test_entropies_closed_form():
    close(D.Cauchy(t64(A), t64(B)).entropy(), np.log(4 * math.pi * B))
    close(D.Gumbel(t64(A), t64(B)).entropy(), np.log(B) + 1 + 0.5772156649015329)
    close(D.HalfNormal(t64(B)).entropy(), 0.5 * np.log(math.pi * B ** 2 / 2) + 0.5)
    close(D.LogNormal(t64(A), t64(B)).entropy(), A + 0.5 + 0.5 * np.log(2 * math.pi * B ** 2))
    # Gamma(1, rate) is Exponential(rate): entropy 1 - log rate
    close(D.Gamma(t64([1.0, 1.0]), t64(B)).entropy(), 1 - np.log(B))


def test_cdf_icdf_round_trips():
    p = t64([0.1, 0.5, 0.95])
    for d in (D.Cauchy(t64(0.5), t64(2.0)), D.Gumbel(t64(0.5), t64(2.0)), D.LogNormal(t64(0.5), t64(0.4)),
              D.HalfNormal(t64(1.3))):
        close(d.cdf(d.icdf(p)), p.numpy(), rtol=1e-9)
    close(D.Cauchy(t64(0.0), t64(1.0)).cdf(t64([1.0])), [0.75])
    close(D.Gumbel(t64(0.0), t64(1.0)).cdf(t64([0.0])), [math.exp(-1)])


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_against_torch():
    T = torch.distributions
    for name, params, values, *_ in UNIVARIATE:
        e = getattr(D, name)(*[t64(p) for p in params])
        t = getattr(T, name)(*[tt(p) for p in params])
        close(e.log_prob(t64(values)), t.log_prob(tt(values)), rtol=1e-9)
        close(e.mean, t.mean, rtol=1e-9)
        close(e.variance, t.variance, rtol=1e-9)
        if name != "Poisson":
            close(e.entropy(), t.entropy(), rtol=1e-9)
    conc = [[0.5, 3.0, 1.2]]
    e, t = D.Dirichlet(t64(conc)), T.Dirichlet(tt(conc))
    for attr in ("mean", "variance", "mode"):
        close(getattr(e, attr), getattr(t, attr), rtol=1e-9)
    close(e.entropy(), t.entropy(), rtol=1e-9)
    close(e.log_prob(t64([[0.2, 0.5, 0.3]])), t.log_prob(tt([[0.2, 0.5, 0.3]])), rtol=1e-9)
    e, t = D.Multinomial(4, t64([0.2, 0.3, 0.5])), T.Multinomial(4, tt([0.2, 0.3, 0.5]))
    close(e.log_prob(t64([1.0, 0.0, 3.0])), t.log_prob(tt([1.0, 0.0, 3.0])), rtol=1e-9)
    # PyTorch 2.11 takes lgamma(n + 1) in float32 here (2.5e-8 off); the exact value is test_multinomial_entropy's.
    close(e.entropy(), t.entropy(), rtol=1e-7)


def test_multinomial_entropy():
    p = np.array([0.2, 0.3, 0.5])
    exact = 0.0
    for a in range(5):
        for b in range(5 - a):
            k = np.array([a, b, 4 - a - b])
            lp = lgamma(5) - lgamma(k + 1).sum() + (k * np.log(p)).sum()
            exact -= math.exp(lp) * lp
    close(D.Multinomial(4, t64(p)).entropy(), exact, rtol=1e-13)


def test_dirichlet_multinomial_closed_forms():
    a = np.array([0.5, 3.0, 1.2])
    x = np.array([0.2, 0.5, 0.3])
    d = D.Dirichlet(t64(a))
    assert d.batch_shape == () and d.event_shape == (3,)
    close(d.log_prob(t64(x)), lgamma(a.sum()) - lgamma(a).sum() + ((a - 1) * np.log(x)).sum(), rtol=1e-10)
    close(d.mean, a / a.sum())
    m = D.Multinomial(4, t64([0.2, 0.3, 0.5]))
    close(m.log_prob(t64([1.0, 0.0, 3.0])), math.log(4 * 0.2 * 0.5 ** 3), rtol=1e-10)
    close(m.mean, [0.8, 1.2, 2.0])


def _mvn_logpdf(x, mu, cov):
    k = len(mu)
    diff = x - mu
    return -0.5 * (k * math.log(2 * math.pi) + np.linalg.slogdet(cov)[1] + diff @ np.linalg.solve(cov, diff))


COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal(kind):
    given = {"covariance_matrix": COV, "precision_matrix": np.linalg.inv(COV),
             "scale_tril": np.linalg.cholesky(COV)}[kind]
    loc = np.array([[0.1, -0.2, 0.3], [1.0, 0.0, -1.0]])
    d = D.MultivariateNormal(t64(loc), **{kind: t64(given)})
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    x = np.array([0.3, 0.1, -0.5])
    close(d.log_prob(t64(x)), [_mvn_logpdf(x, mu, COV) for mu in loc], rtol=1e-10)
    close(d.covariance_matrix[0], COV, rtol=1e-10)
    close(d.precision_matrix[1], np.linalg.inv(COV), rtol=1e-9)
    close(d.scale_tril[0], np.linalg.cholesky(COV), rtol=1e-10)
    close(d.variance[0], np.diag(COV), rtol=1e-10)
    close(d.entropy(), [0.5 * np.linalg.slogdet(2 * math.pi * math.e * COV)[1]] * 2, rtol=1e-10)
    ember.manual_seed(3)
    s = d.sample((20000,)).numpy()
    assert s.shape == (20000, 2, 3)
    np.testing.assert_allclose(np.cov(s[:, 0].T), COV, atol=0.06)
    np.testing.assert_allclose(s.mean(0), loc, atol=0.05)
    with pytest.raises(ValueError, match="Exactly one"):
        D.MultivariateNormal(t64(loc), covariance_matrix=t64(COV), scale_tril=t64(np.linalg.cholesky(COV)))


def test_multivariate_normal_rsample_gradient():
    loc = t64([0.5, -1.0]).requires_grad_()
    tril = t64([[1.0, 0.0], [0.5, 2.0]]).requires_grad_()
    draw = D.MultivariateNormal(loc, scale_tril=tril).rsample((7,))
    draw.sum().backward()
    close(loc.grad, [7.0, 7.0])
    eps = np.linalg.solve(tril.detach().numpy(), (draw.detach().numpy() - [0.5, -1.0]).T)  # [2, 7]
    # d(sum of L eps)/dL[i, j] = sum over draws of eps[j] (the whole matrix multiplies, as in torch)
    close(tril.grad, np.outer([1.0, 1.0], eps.sum(1)), rtol=1e-9)


def test_sample_statistics():
    ember.manual_seed(0)
    n = 20000
    cases = [
        (D.Gamma(t64([0.3, 1.0, 4.0, 40.0]), t64([1.0, 2.0, 0.5, 4.0])), None),
        (D.Chi2(t64([0.7, 3.0])), None),
        (D.Beta(t64([0.5, 3.0]), t64([2.0, 0.7])), None),
        (D.Dirichlet(t64([0.5, 3.0, 1.2])), None),
        (D.LogNormal(t64([0.0, -1.0]), t64([0.5, 0.3])), None),
        (D.HalfNormal(t64([2.0, 0.3])), None),
        (D.StudentT(t64([5.0, 9.0]), t64([1.0, -1.0]), t64([1.0, 2.0])), None),
        (D.Gumbel(t64([0.5, -1.0]), t64([2.0, 0.3])), None),
        (D.Poisson(t64([0.0, 0.5, 3.0, 12.0, 250.0])), None),
        (D.Binomial(t64([3.0, 300.0]), t64([0.2, 0.7])), None),
        (D.Geometric(t64([0.2, 0.7])), None),
        (D.Multinomial(5, t64([0.2, 0.3, 0.5])), None),
    ]
    for d, _ in cases:
        s = d.sample((n,))
        assert s.shape == (n,) + tuple(d.batch_shape) + tuple(d.event_shape)
        s = s.numpy()
        mean, var = d.mean.numpy(), d.variance.numpy()
        np.testing.assert_allclose(s.mean(0), mean, rtol=0.05, atol=0.02 * np.sqrt(var).max() + 1e-3,
                                   err_msg=repr(d))
        np.testing.assert_allclose(s.var(0), var, rtol=0.1, atol=1e-3, err_msg=repr(d))
    # discrete samples are integers in the support
    p = D.Poisson(t64([3.0, 40.0])).sample((100,)).numpy()
    assert (p == np.floor(p)).all() and (p >= 0).all()
    g = D.Geometric(t64([0.5])).sample((100,)).numpy()
    assert (g == np.floor(g)).all() and (g >= 0).all()
    m = D.Multinomial(7, t64([[0.2, 0.8], [0.5, 0.5]])).sample((3,)).numpy()
    assert m.shape == (3, 2, 2) and (m.sum(-1) == 7).all()
    c = D.Cauchy(t64(1.0), t64(2.0)).sample((n,)).numpy()
    np.testing.assert_allclose(np.median(c), 1.0, atol=0.1)
    np.testing.assert_allclose(np.percentile(c, 75) - np.percentile(c, 25), 4.0, rtol=0.1)


def test_gamma_implicit_gradient_mean_is_exact():
    # x = G(a) / rate has E[x] = a / rate; the pathwise gradient averaged over draws estimates d E[x]/d a
    ember.manual_seed(1)
    a = t64([0.2, 0.9, 3.0, 30.0]).requires_grad_()
    rate = t64([1.0, 2.0, 0.5, 3.0]).requires_grad_()
    x = D.Gamma(a, rate).rsample((20000,))
    x.mean(0).sum().backward()
    close(a.grad, 1 / rate.detach().numpy(), rtol=0.05)
    close(rate.grad, -(a / rate ** 2).detach().numpy(), rtol=0.05)


def test_gamma_implicit_gradient_against_inverse_cdf():
    from ember.distributions.gamma import _standard_gamma_grad
    alpha = np.array([0.05, 0.5, 1.0, 2.5, 7.0, 60.0, 400.0])
    u = np.array([1e-3, 0.1, 0.5, 0.9, 0.999, 0.3, 0.7])
    if spspecial is not None:
        x = spspecial.gammaincinv(alpha, u)
        h = 1e-5 * alpha
        want = (spspecial.gammaincinv(alpha + h, u) - spspecial.gammaincinv(alpha - h, u)) / (2 * h)
        close(_standard_gamma_grad(t64(alpha), t64(x)), want, rtol=1e-6)
    # without scipy: Gamma(1) is Exponential, x = -log(1 - u), whose dF/da at a = 1 is known in closed form:
    # dx/da = -(dP/da) / p; at a = 1, dP/da = -e^-x (E1-like series) -- checked against finite differences of
    # the cdf P(a, x) = sum_n e^-x x^(a+n) / Gamma(a+n+1) evaluated by its series in numpy
    x = np.array([0.1, 1.0, 3.0])

    def cdf(a):
        n = np.arange(200)[:, None]
        return np.exp((a + n) * np.log(x) - x - lgamma(a + n + 1)).sum(0)
    h = 1e-6
    dp_da = (cdf(1 + h) - cdf(1 - h)) / (2 * h)
    close(_standard_gamma_grad(t64([1.0, 1.0, 1.0]), t64(x)), -dp_da / np.exp(-x), rtol=1e-6)
    if torch is not None:
        close(_standard_gamma_grad(t64(alpha), t64(alpha)),
              torch._standard_gamma_grad(tt(alpha), tt(alpha)), rtol=1e-3)


def test_beta_dirichlet_rsample_gradients():
    ember.manual_seed(2)
    a = t64([2.0]).requires_grad_()
    b = t64([3.0]).requires_grad_()
    D.Beta(a, b).rsample((20000,)).mean().backward()
    # d/da a/(a+b) = b/(a+b)^2 = 0.12, d/db = -a/(a+b)^2 = -0.08
    close(a.grad, [0.12], rtol=0.08)
    close(b.grad, [-0.08], rtol=0.08)
    conc = t64([1.0, 2.0, 3.0]).requires_grad_()
    D.Dirichlet(conc).rsample((20000,))[:, 0].mean().backward()
    close(conc.grad, [5 / 36, -1 / 36, -1 / 36], atol=0.01)


def test_other_rsample_gradients():
    for make in (lambda l, s: D.LogNormal(l, s), lambda l, s: D.Cauchy(l, s), lambda l, s: D.Gumbel(l, s),
                 lambda l, s: D.StudentT(t64(4.0), l, s)):
        loc, scale = t64([0.3]).requires_grad_(), t64([1.5]).requires_grad_()
        d = make(loc, scale)
        assert d.has_rsample
        d.rsample((5,)).sum().backward()
        assert loc.grad is not None and scale.grad is not None and np.isfinite(scale.grad.numpy()).all()
    loc, scale = t64([0.3]).requires_grad_(), t64([1.5]).requires_grad_()
    draw = D.Gumbel(loc, scale).rsample((6,))
    draw.sum().backward()
    close(loc.grad, [6.0])
    close(scale.grad, ((draw.detach() - 0.3) / 1.5).sum().numpy(), rtol=1e-9)
    s = t64([2.0]).requires_grad_()
    draw = D.HalfNormal(s).rsample((4,))
    draw.sum().backward()
    close(s.grad, (draw.detach() / 2.0).sum().numpy(), rtol=1e-9)
    with pytest.raises(NotImplementedError):
        D.Poisson(t64([1.0])).rsample()


def test_log_prob_gradcheck():
    a = t64([0.7, 2.0]).requires_grad_()
    b = t64([1.5, 0.5]).requires_grad_()
    x = t64([0.4, 0.8])
    for fn in (lambda a, b: D.Gamma(a, b).log_prob(x), lambda a, b: D.Beta(a, b).log_prob(x),
               lambda a, b: D.StudentT(a, 0.1, b).log_prob(x), lambda a, b: D.Gamma(a, b).entropy(),
               lambda a, b: D.Beta(a, b).entropy(), lambda a, b: D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a))):
        assert ember.autograd.gradcheck(fn, (a, b))


def test_mixture_same_family():
    logits = np.array([[0.1, 0.5, -0.3], [0.0, 0.0, 1.0]])
    locs = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
    scales = np.array([[1.0, 0.5, 2.0], [1.0, 2.0, 3.0]])
    d = D.MixtureSameFamily(D.Categorical(logits=t64(logits)), D.Normal(t64(locs), t64(scales)))
    assert d.batch_shape == (2,) and d.event_shape == ()
    w = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    x = np.array([0.3, 2.0])
    dens = (w * np.exp(-(x[:, None] - locs) ** 2 / (2 * scales ** 2)) / (scales * math.sqrt(2 * math.pi))).sum(-1)
    close(d.log_prob(t64(x)), np.log(dens), rtol=1e-10)
    mean = (w * locs).sum(-1)
    close(d.mean, mean)
    close(d.variance, (w * (scales ** 2 + locs ** 2)).sum(-1) - mean ** 2, rtol=1e-10)
    ember.manual_seed(4)
    s = d.sample((20000,)).numpy()
    np.testing.assert_allclose(s.mean(0), mean, atol=4 * np.sqrt(d.variance.numpy().max() / 20000))
    np.testing.assert_allclose(s.var(0), d.variance.numpy(), rtol=0.05)
    # multivariate components
    mv = D.MixtureSameFamily(D.Categorical(logits=t64([0.0, 0.0])),
                             D.Independent(D.Normal(t64([[0.0, 1.0], [2.0, 3.0]]), t64([[1.0, 1.0], [1.0, 1.0]])), 1))
    assert mv.event_shape == (2,) and mv.sample((5,)).shape == (5, 2)
    close(mv.mean, [1.0, 2.0])
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(logits=t64([0.0, 0.0])), D.Normal(t64([0.0, 1.0, 2.0]), t64(1.0)))


def test_relaxed_distributions():
    t = t64(0.5)
    rb = D.RelaxedBernoulli(t, probs=t64([0.2, 0.7]))
    y = np.array([0.3, 0.9])
    logits = np.log(np.array([0.2, 0.7]) / np.array([0.8, 0.3]))
    # density of sigmoid((logits + logistic noise) / t)
    z = np.log(y / (1 - y))
    diff = logits - z * 0.5
    want = math.log(0.5) + diff - 2 * np.log1p(np.exp(diff)) - np.log(y * (1 - y))
    close(rb.log_prob(t64(y)), want, rtol=1e-9)
    ember.manual_seed(5)
    s = rb.rsample((20000,))
    assert ((s > 0) & (s < 1)).all()
    # as the temperature drops, draws approach Bernoulli(p)
    sharp = D.RelaxedBernoulli(t64(0.05), probs=t64([0.2, 0.7])).sample((20000,)).numpy()
    np.testing.assert_allclose((sharp > 0.5).mean(0), [0.2, 0.7], atol=0.02)
    oh = D.RelaxedOneHotCategorical(t64(0.3), probs=t64([0.2, 0.7, 0.1]))
    draw = oh.rsample((20000,))
    assert oh.event_shape == (3,) and draw.shape == (20000, 3)
    close(draw.sum(-1), np.ones(20000), rtol=1e-9)
    np.testing.assert_allclose(np.bincount(draw.numpy().argmax(-1), minlength=3) / 20000, [0.2, 0.7, 0.1], atol=0.02)
    probs = t64([0.2, 0.7, 0.1]).requires_grad_()
    D.RelaxedOneHotCategorical(t64(0.3), probs=probs).rsample((3,)).sum().backward()
    assert probs.grad is not None
    if torch is not None:
        tb = torch.distributions.RelaxedBernoulli(tt(0.5), probs=tt([0.2, 0.7]))
        close(rb.log_prob(t64(y)), tb.log_prob(tt(y)), rtol=1e-9)
        v = [0.3, 0.6, 0.1]
        to = torch.distributions.RelaxedOneHotCategorical(tt(0.3), probs=tt([0.2, 0.7, 0.1]))
        close(oh.log_prob(t64(v)), to.log_prob(tt(v)), rtol=1e-9)


# ---- transforms, constraints, biject_to / transform_to -------------------------------------------------------

XS = np.array([[0.3, -1.2, 2.0], [0.1, 0.5, -0.4]])
TRANSFORMS = [
    ("exp", lambda: transforms.ExpTransform(), XS),
    ("sigmoid", lambda: transforms.SigmoidTransform(), XS),
    ("tanh", lambda: transforms.TanhTransform(), XS),
    ("affine", lambda: transforms.AffineTransform(0.5, -2.0), XS),
    ("affine_tensor", lambda: transforms.AffineTransform(t64([1.0, 2.0, 3.0]), t64([0.5, -1.0, 3.0])), XS),
    ("power", lambda: transforms.PowerTransform(2.5), np.abs(XS) + 0.1),
    ("softplus", lambda: transforms.SoftplusTransform(), XS),
    ("compose", lambda: transforms.ComposeTransform([transforms.AffineTransform(1.0, 2.0), transforms.ExpTransform()]),
     XS),
]


def _numeric_log_det(fn, x, h=1e-6):
    """log|f'(x)| elementwise by central differences (for elementwise transforms)."""
    return np.log(np.abs((fn(x + h) - fn(x - h)) / (2 * h)))


@pytest.mark.parametrize("name,make,x", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_elementwise_transforms(name, make, x):
    t = make()
    assert t.bijective
    y = t(t64(x))
    close(t.inv(y), x, rtol=1e-9, atol=1e-12)
    assert t.inv.inv is t
    fn = lambda v: t(t64(v)).numpy()  # noqa: E731
    close(t.log_abs_det_jacobian(t64(x), y), _numeric_log_det(fn, x), rtol=1e-6, atol=1e-7)
    close(t.inv.log_abs_det_jacobian(y, t64(x)), -_numeric_log_det(fn, x), rtol=1e-6, atol=1e-7)
    assert bool(t.codomain.check(y).all())


def test_stick_breaking_and_softmax():
    sb = transforms.StickBreakingTransform()
    assert sb.domain.event_dim == 1 and sb.codomain is constraints.simplex
    y = sb(t64(XS))
    assert y.shape == (2, 4) and sb.forward_shape((2, 3)) == (2, 4) and sb.inverse_shape((2, 4)) == (2, 3)
    close(y.sum(-1), [1.0, 1.0], rtol=1e-12)
    close(sb(t64(np.zeros(3))), [0.25] * 4, rtol=1e-12)  # zeros break the stick evenly
    close(sb.inv(y), XS, rtol=1e-9)
    # log|det J| of x -> y[:-1] (the free coordinates), by finite differences
    for row in XS:
        jac = np.zeros((3, 3))
        for j in range(3):
            e = np.zeros(3)
            e[j] = 1e-6
            jac[:, j] = (sb(t64(row + e)).numpy()[:3] - sb(t64(row - e)).numpy()[:3]) / 2e-6
        close(sb.log_abs_det_jacobian(t64(row), sb(t64(row))), np.linalg.slogdet(jac)[1], rtol=1e-6)
    sm = transforms.SoftmaxTransform()
    assert not sm.bijective
    close(sm(t64(XS)), np.exp(XS) / np.exp(XS).sum(-1, keepdims=True), rtol=1e-12)


def test_other_transforms():
    a = transforms.AbsTransform()
    close(a(t64([-2.0, 3.0])), [2.0, 3.0])
    assert not a.bijective
    lc = transforms.LowerCholeskyTransform()
    m = lc(t64([[0.5, 9.0], [-1.0, 0.0]]))
    close(m, [[math.exp(0.5), 0.0], [-1.0, 1.0]])
    assert bool(constraints.lower_cholesky.check(m))
    r = transforms.ReshapeTransform((6,), (2, 3))
    assert r(t64(np.arange(12.0).reshape(2, 6))).shape == (2, 2, 3)
    ind = transforms.IndependentTransform(transforms.ExpTransform(), 1)
    close(ind.log_abs_det_jacobian(t64(XS), ind(t64(XS))), XS.sum(-1))
    assert ind.domain.event_dim == 1 and transforms.ExpTransform().event_dim == 0
    with pytest.raises(ValueError):
        _ = transforms.StickBreakingTransform().event_dim  # domain and codomain event dims agree: 1
        raise ValueError("reached")
    c = transforms.ComposeTransform([transforms.ExpTransform(), transforms.StickBreakingTransform()])
    assert c.domain.event_dim == 1 and c.codomain.event_dim == 1
    close(c.log_abs_det_jacobian(t64(XS), c(t64(XS))),
          transforms.StickBreakingTransform().log_abs_det_jacobian(t64(np.exp(XS)), c(t64(XS))).numpy() + XS.sum(-1),
          rtol=1e-10)
    cached = transforms.ExpTransform(cache_size=1)
    x = t64([1.0])
    assert cached.inv(cached(x)) is x
    with pytest.raises(ValueError):
        transforms.ExpTransform(cache_size=2)
    assert transforms.ExpTransform() == transforms.ExpTransform()
    assert transforms.AffineTransform(1.0, 2.0) == transforms.AffineTransform(1.0, 2.0)
    assert transforms.AffineTransform(1.0, 2.0) != transforms.AffineTransform(1.0, 3.0)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_transforms_against_torch():
    T = torch.distributions.transforms
    for name in ("ExpTransform", "SigmoidTransform", "TanhTransform", "SoftplusTransform", "StickBreakingTransform"):
        a, b = getattr(transforms, name)(), getattr(T, name)()
        ya, yb = a(t64(XS)), b(tt(XS))
        close(ya, yb, rtol=1e-10)
        close(a.log_abs_det_jacobian(t64(XS), ya), b.log_abs_det_jacobian(tt(XS), yb), rtol=1e-10)


def test_constraints_check():
    v = t64([-1.0, 0.0, 0.5, 1.0, 2.5])
    cases = [
        (constraints.real, [True] * 5),
        (constraints.positive, [False, False, True, True, True]),
        (constraints.nonnegative, [False, True, True, True, True]),
        (constraints.unit_interval, [False, True, True, True, False]),
        (constraints.interval(-1.0, 0.5), [True, True, True, False, False]),
        (constraints.half_open_interval(-1.0, 0.5), [True, True, False, False, False]),
        (constraints.greater_than(0.5), [False, False, False, True, True]),
        (constraints.greater_than_eq(0.5), [False, False, True, True, True]),
        (constraints.less_than(0.5), [True, True, False, False, False]),
        (constraints.boolean, [False, True, False, True, False]),
        (constraints.nonnegative_integer, [False, True, False, True, False]),
        (constraints.positive_integer, [False, False, False, True, False]),
        (constraints.integer_interval(-1, 1), [True, True, False, True, False]),
    ]
    for c, want in cases:
        assert c.check(v).tolist() == want, repr(c)
    assert not constraints.real.check(t64([math.nan])).item()
    assert constraints.simplex.check(t64([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]])).tolist() == [True, False, False]
    assert constraints.simplex.event_dim == 1 and constraints.lower_cholesky.event_dim == 2
    ind = constraints.independent(constraints.positive, 1)
    assert ind.event_dim == 1 and ind.check(t64([[1.0, 2.0], [1.0, -2.0]])).tolist() == [True, False]
    assert constraints.real_vector.check(t64([[1.0, math.nan], [0.0, 1.0]])).tolist() == [False, True]
    mats = t64([[[2.0, 0.0], [1.0, 1.0]], [[2.0, 1.0], [1.0, 1.0]], [[-1.0, 0.0], [0.0, 1.0]]])
    assert constraints.lower_cholesky.check(mats).tolist() == [True, False, False]
    assert constraints.lower_triangular.check(mats).tolist() == [True, False, True]
    assert constraints.positive_definite.check(mats[1:2]).tolist() == [True]
    assert constraints.positive_definite.check(t64([[[1.0, 2.0], [2.0, 1.0]]])).tolist() == [False]
    assert constraints.symmetric.check(mats).tolist() == [False, True, True]
    assert constraints.one_hot.check(t64([[0.0, 1.0], [1.0, 1.0]])).tolist() == [True, False]
    assert not constraints.positive.is_discrete and constraints.nonnegative_integer.is_discrete
    assert repr(constraints.interval(0, 1)) == "Interval(lower_bound=0, upper_bound=1)"
    assert repr(constraints.positive) == "GreaterThan(lower_bound=0.0)"
    assert constraints.is_dependent(constraints.dependent)
    with pytest.raises(ValueError):
        constraints.dependent.check(v)
    c = constraints.cat([constraints.positive, constraints.real], 0, [2, 3])
    assert c.check(v).tolist() == [False, False, True, True, True]
    s = constraints.stack([constraints.positive, constraints.real], 1)
    assert s.check(t64([[1.0, -1.0], [-1.0, 1.0]])).tolist() == [[True, True], [False, True]]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_and_transform_to(registry):
    reg = getattr(D, registry)
    x = t64(XS)
    for c in (constraints.real, constraints.positive, constraints.nonnegative, constraints.greater_than(1.5),
              constraints.greater_than_eq(-2.0), constraints.less_than(2.0), constraints.interval(-1.0, 3.0),
              constraints.unit_interval, constraints.half_open_interval(0.0, 2.0), constraints.simplex,
              constraints.real_vector, constraints.independent(constraints.positive, 1)):
        t = reg(c)
        y = t(x)
        assert bool(c.check(y).all()), (registry, c)
        if t.bijective:
            close(t.inv(y), XS, rtol=1e-7, atol=1e-9)
    assert reg(constraints.positive) == transforms.ExpTransform()
    assert isinstance(D.biject_to(constraints.simplex), transforms.StickBreakingTransform)
    assert isinstance(D.transform_to(constraints.simplex), transforms.SoftmaxTransform)
    m = D.transform_to(constraints.lower_cholesky)(t64(np.ones((2, 2))))
    assert bool(constraints.lower_cholesky.check(m))
    with pytest.raises(NotImplementedError):
        reg(constraints.boolean)
    # supports of distributions are constraints biject_to understands
    assert bool(D.Gamma(t64(1.0), t64(1.0)).support.check(D.biject_to(D.Gamma(t64(1.0), t64(1.0)).support)(x)).all())


def test_transformed_distribution():
    base = D.Normal(t64([0.5, -1.0]), t64([1.0, 0.3]))
    d = D.TransformedDistribution(base, [transforms.AffineTransform(1.0, 2.0), transforms.ExpTransform()])
    assert d.batch_shape == (2,) and d.event_shape == () and d.has_rsample
    y = np.array([0.7, 2.0])
    # y = exp(1 + 2 x): x = (log y - 1) / 2; density p(x) / (2 y)
    x = (np.log(y) - 1) / 2
    want = -(x - [0.5, -1.0]) ** 2 / (2 * np.array([1.0, 0.3]) ** 2) - np.log([1.0, 0.3]) - 0.5 * math.log(2 * math.pi)
    close(d.log_prob(t64(y)), want - np.log(2 * y), rtol=1e-10)
    close(d.cdf(t64(y)), base.cdf(t64(x)).numpy(), rtol=1e-10)
    flipped = D.TransformedDistribution(base, transforms.AffineTransform(0.0, -1.0))
    close(flipped.cdf(t64([0.5, 1.0])), 1 - base.cdf(t64([-0.5, -1.0])).numpy(), rtol=1e-10)
    # a transform with event_dim 1 turns a batch of Normals into one vector-valued distribution
    sb = D.TransformedDistribution(D.Normal(t64(np.zeros(3)), t64(np.ones(3))), transforms.StickBreakingTransform())
    assert sb.batch_shape == () and sb.event_shape == (4,)
    draw = sb.sample((5,))
    assert draw.shape == (5, 4)
    close(draw.sum(-1), np.ones(5), rtol=1e-10)
    assert sb.log_prob(draw).shape == (5,)
    with pytest.raises(ValueError):
        D.TransformedDistribution(base, "exp")


# ---- KL divergences -----------------------------------------------------------------------------------------

KL_PAIRS = [
    ("Gamma", lambda: D.Gamma(t64([0.5, 3.0]), t64([2.0, 0.7])), lambda: D.Gamma(t64([1.5, 2.0]), t64([1.0, 1.7]))),
    ("Beta", lambda: D.Beta(t64([0.5, 3.0]), t64([2.0, 0.7])), lambda: D.Beta(t64([1.5, 2.0]), t64([1.0, 1.7]))),
    ("Dirichlet", lambda: D.Dirichlet(t64([[0.5, 3.0, 1.0]])), lambda: D.Dirichlet(t64([[1.5, 2.0, 2.0]]))),
    ("Gumbel", lambda: D.Gumbel(t64([0.5, 3.0]), t64([2.0, 0.7])), lambda: D.Gumbel(t64([1.5, 2.0]), t64([1.0, 1.7]))),
    ("Poisson", lambda: D.Poisson(t64([0.5, 3.0])), lambda: D.Poisson(t64([1.5, 2.0]))),
    ("Geometric", lambda: D.Geometric(t64([0.5, 0.3])), lambda: D.Geometric(t64([0.15, 0.2]))),
    ("Binomial", lambda: D.Binomial(t64([4.0, 4.0]), t64([0.5, 0.3])),
     lambda: D.Binomial(t64([4.0, 4.0]), t64([0.15, 0.2]))),
    ("Cauchy", lambda: D.Cauchy(t64([0.5, 3.0]), t64([2.0, 0.7])), lambda: D.Cauchy(t64([1.5, 2.0]), t64([1.0, 1.7]))),
    ("HalfNormal", lambda: D.HalfNormal(t64([2.0, 0.7])), lambda: D.HalfNormal(t64([1.0, 1.7]))),
    ("LogNormal", lambda: D.LogNormal(t64([0.5, 3.0]), t64([2.0, 0.7])),
     lambda: D.LogNormal(t64([1.5, 2.0]), t64([1.0, 1.7]))),
    ("Chi2", lambda: D.Chi2(t64([2.0, 0.7])), lambda: D.Chi2(t64([1.0, 1.7]))),
    ("MultivariateNormal", lambda: D.MultivariateNormal(t64([0.1, -0.2, 0.3]), covariance_matrix=t64(COV)),
     lambda: D.MultivariateNormal(t64([0.0, 1.0, 0.0]), scale_tril=t64(np.diag([1.0, 2.0, 0.5])))),
    ("Exponential-Gamma", lambda: D.Exponential(t64([2.0, 0.5])), lambda: D.Gamma(t64([1.5, 0.8]), t64([0.5, 1.0]))),
    ("Gamma-Exponential", lambda: D.Gamma(t64([1.5, 0.8]), t64([0.5, 1.0])), lambda: D.Exponential(t64([2.0, 0.5]))),
    ("Uniform-Normal", lambda: D.Uniform(t64([0.0, -1.0]), t64([2.0, 0.5])),
     lambda: D.Normal(t64([0.5, 0.0]), t64([1.5, 0.7]))),
    ("Uniform-Gumbel", lambda: D.Uniform(t64([0.0, -1.0]), t64([2.0, 0.5])),
     lambda: D.Gumbel(t64([0.5, 0.0]), t64([1.5, 0.7]))),
    ("Pareto", lambda: D.Pareto(t64([1.0, 3.0]), t64([2.5, 3.0])), lambda: D.Pareto(t64([0.5, 2.5]), t64([1.5, 4.0]))),
    ("Exponential-Normal", lambda: D.Exponential(t64([2.0, 0.5])), lambda: D.Normal(t64([0.5, 0.0]), t64([1.5, 0.7]))),
    ("Gamma-Normal", lambda: D.Gamma(t64([2.0, 0.5]), t64([1.0, 3.0])),
     lambda: D.Normal(t64([0.5, 0.0]), t64([1.5, 0.7]))),
    ("Laplace-Normal", lambda: D.Laplace(t64([0.3, -1.0]), t64([1.0, 0.5])),
     lambda: D.Normal(t64([0.5, 0.0]), t64([1.5, 0.7]))),
    ("Normal-Gumbel", lambda: D.Normal(t64([0.3, -1.0]), t64([1.0, 0.5])),
     lambda: D.Gumbel(t64([0.5, 0.0]), t64([1.5, 0.7]))),
    ("Uniform-Exponential", lambda: D.Uniform(t64([0.0, 0.5]), t64([2.0, 1.0])), lambda: D.Exponential(t64([0.5, 2.0]))),
    ("Uniform-Gamma", lambda: D.Uniform(t64([0.0, 0.5]), t64([2.0, 1.5])),
     lambda: D.Gamma(t64([2.0, 0.5]), t64([1.0, 3.0]))),
    ("Uniform-Beta", lambda: D.Uniform(t64([0.0, 0.2]), t64([1.0, 0.5])),
     lambda: D.Beta(t64([2.0, 0.5]), t64([1.0, 3.0]))),
    ("ContinuousBernoulli", lambda: D.ContinuousBernoulli(t64([0.2, 0.7])),
     lambda: D.ContinuousBernoulli(t64([0.4, 0.1]))),
]


@pytest.mark.parametrize("name,make_p,make_q", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_against_monte_carlo(name, make_p, make_q):
    p, q = make_p(), make_q()
    kl = D.kl_divergence(p, q).numpy()
    assert (kl >= 0).all()
    if name != "Cauchy":  # heavy tails: the Monte Carlo estimate converges too slowly to check
        ember.manual_seed(7)
        x = p.sample((40000,))
        ratio = (p.log_prob(x) - q.log_prob(x)).numpy()
        se = ratio.std(0) / math.sqrt(len(ratio))
        assert (np.abs(ratio.mean(0) - kl) <= 5 * se + 1e-3).all(), (ratio.mean(0), kl)
    assert np.allclose(D.kl_divergence(p, p).numpy(), 0, atol=1e-9)
    if torch is not None:
        T = torch.distributions

        def to_torch(d):
            names = {"Exponential": ("rate",), "Uniform": ("low", "high"), "Normal": ("loc", "scale"),
                     "Laplace": ("loc", "scale")}.get(
                type(d).__name__, [k for k in type(d).arg_constraints if k not in d._derived])
            params = {k: tt(getattr(d, k).numpy()) for k in names if k in vars(d)}
            return getattr(T, type(d).__name__)(**params)
        close(kl, T.kl_divergence(to_torch(p), to_torch(q)), rtol=1e-8)


def test_kl_infinite_outside_the_support_and_bregman():
    assert D.kl_divergence(D.Pareto(t64(1.0), t64(2.0)), D.Pareto(t64(2.0), t64(2.0))).item() == math.inf
    assert D.kl_divergence(D.Uniform(t64(-1.0), t64(1.0)), D.Exponential(t64(1.0))).item() == math.inf
    assert D.kl_divergence(D.Uniform(t64(-1.0), t64(1.0)), D.Gamma(t64(2.0), t64(1.0))).item() == math.inf
    assert D.kl_divergence(D.Uniform(t64(0.5), t64(1.5)), D.Beta(t64(2.0), t64(1.0))).item() == math.inf
    # the generic exponential-family KL (Bregman divergence of the log normalizer) equals the closed forms,
    # gradients included
    from ember.distributions.kl_cross import _kl_exponential_family
    a, b = t64([0.3, 2.0]).requires_grad_(), t64([1.5, 0.4]).requires_grad_()
    pairs = [(lambda a, b: D.Gamma(a, b), lambda: D.Gamma(t64([1.3, 0.7]), t64([2.0, 1.0]))),
             (lambda a, b: D.Beta(a, b), lambda: D.Beta(t64([1.3, 0.7]), t64([2.0, 1.0]))),
             (lambda a, b: D.Normal(a, b), lambda: D.Normal(t64([1.3, 0.7]), t64([2.0, 1.0]))),
             (lambda a, b: D.Dirichlet(ember.stack([a, b], -1)), lambda: D.Dirichlet(t64([[1.3, 2.0], [0.7, 1.0]]))),
             (lambda a, b: D.Exponential(a * b), lambda: D.Exponential(t64([1.3, 0.7]))),
             (lambda a, b: D.Bernoulli(a / 3 + b / 3), lambda: D.Bernoulli(t64([0.3, 0.6])))]
    for make_p, make_q in pairs:
        generic = _kl_exponential_family(make_p(a, b), make_q())
        (ga, gb) = ember.autograd.grad(generic.sum(), [a, b])
        closed = D.kl_divergence(make_p(a, b), make_q())
        (wa, wb) = ember.autograd.grad(closed.sum(), [a, b])
        close(generic, closed.detach().numpy(), rtol=1e-10)
        close(ga, wa.numpy(), rtol=1e-9)
        close(gb, wb.numpy(), rtol=1e-9)
    with pytest.raises(NotImplementedError):
        _kl_exponential_family(D.Gamma(t64(1.0), t64(1.0)), D.Beta(t64(1.0), t64(1.0)))


def test_kl_errors():
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Binomial(t64(3.0), t64(0.5)), D.Binomial(t64(4.0), t64(0.5)))
    with pytest.raises(ValueError, match="event shapes"):
        D.kl_divergence(D.MultivariateNormal(t64([0.0]), t64([[1.0]])),
                        D.MultivariateNormal(t64([0.0, 0.0]), t64(np.eye(2))))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Poisson(t64(1.0)), D.Gamma(t64(1.0), t64(1.0)))


# ---- argument validation --------------------------------------------------------------------------------------

@pytest.mark.parametrize("make,param,constraint", [
    (lambda: D.Gamma(t64([-1.0]), t64([1.0])), "concentration", "GreaterThan(lower_bound=0.0)"),
    (lambda: D.Gamma(t64([1.0]), t64([0.0])), "rate", "GreaterThan(lower_bound=0.0)"),
    (lambda: D.Beta(t64([1.0]), t64([-2.0])), "concentration0", "GreaterThan"),
    (lambda: D.Dirichlet(t64([1.0, -1.0])), "concentration", "IndependentConstraint(GreaterThan(lower_bound=0.0), 1)"),
    (lambda: D.Poisson(t64([-1.0])), "rate", "GreaterThanEq(lower_bound=0.0)"),
    (lambda: D.Binomial(t64([2.5]), t64([0.5])), "total_count", "IntegerGreaterThan(lower_bound=0)"),
    (lambda: D.Binomial(t64([2.0]), t64([1.5])), "probs", "Interval(lower_bound=0.0, upper_bound=1.0)"),
    (lambda: D.StudentT(t64([0.0])), "df", "GreaterThan"),
    (lambda: D.LogNormal(t64([0.0]), t64([-1.0])), "scale", "GreaterThan"),
    (lambda: D.Cauchy(t64([math.nan]), t64([1.0])), "loc", "Real()"),
    (lambda: D.MultivariateNormal(t64([0.0, 0.0]), t64([[1.0, 2.0], [2.0, 1.0]])), "covariance_matrix",
     "PositiveDefinite()"),
    (lambda: D.MultivariateNormal(t64([0.0, 0.0]), scale_tril=t64([[1.0, 1.0], [0.0, 1.0]])), "scale_tril",
     "LowerCholesky()"),
    (lambda: D.Multinomial(3, t64([0.5, -0.5, 1.0])), "probs", "Simplex()"),
])
def test_validate_args_errors(make, param, constraint):
    with pytest.raises(ValueError) as info:
        make()
    message = str(info.value)
    assert f"Expected parameter {param} " in message and constraint in message


def test_validate_sample_and_opt_out():
    with pytest.raises(ValueError, match="within the support"):
        D.Gamma(t64(1.0), t64(1.0)).log_prob(t64(-1.0))
    with pytest.raises(ValueError, match="within the support"):
        D.Poisson(t64(1.0)).log_prob(t64(0.5))
    with pytest.raises(ValueError, match="within the support"):
        D.Beta(t64(1.0), t64(1.0)).log_prob(t64(1.5))
    with pytest.raises(ValueError, match="not broadcastable"):
        D.Gamma(t64([1.0, 2.0]), t64(1.0)).log_prob(t64([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="right-most size of value must match event_shape"):
        D.Dirichlet(t64([1.0, 2.0])).log_prob(t64([0.2, 0.3, 0.5]))
    # validate_args=False skips the checks
    D.Gamma(t64([-1.0]), t64([1.0]), validate_args=False)
    D.Gamma(t64(1.0), t64(1.0), validate_args=False).log_prob(t64(-1.0))
    with pytest.raises(ValueError, match="either `probs` or `logits`"):
        D.Geometric(probs=t64(0.5), logits=t64(0.0))

