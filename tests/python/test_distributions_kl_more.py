"""kl_divergence between different families (ember/distributions/kl_cross_more.py):
every pair against KL(p || q) = integral of p (log p - log q) computed by
Gauss-Legendre quadrature over p's support from densities written here in
numpy (infinite where q's log density is -inf on p's support), against
torch.distributions where importable, batch broadcasting, the infinite
branches' gradients and gradcheck; Wishart || Wishart against its Bregman
divergence, Monte Carlo and torch."""
import math

import numpy as np
import pytest

import ember
import ember.distributions as D
from harness import torch

CASES = []

_lgamma = np.vectorize(math.lgamma)
_EULER = 0.5772156649015329


# ---- numpy log densities, -inf off the support ----------------------------------------------------------

def _where(inside, value):
    return np.where(inside, value, -np.inf)


def _cb_log_norm(lam):
    # C(lambda) = 2 artanh(1 - 2 lambda) / (1 - 2 lambda), 2 at lambda = 1/2
    u = 1 - 2 * lam
    return math.log(2.0) if abs(u) < 1e-12 else math.log(2 * math.atanh(u) / u)


def _log_density(name, par, x):
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "Normal":
            return -0.5 * ((x - par["loc"]) / par["scale"]) ** 2 - math.log(par["scale"] * math.sqrt(2 * math.pi))
        if name == "Laplace":
            return -math.log(2 * par["scale"]) - np.abs(x - par["loc"]) / par["scale"]
        if name == "Gumbel":
            z = (x - par["loc"]) / par["scale"]
            return -z - np.exp(-z) - math.log(par["scale"])
        if name == "Exponential":
            r = par["rate"]
            return _where(x >= 0, math.log(r) - r * x)
        if name == "Gamma":
            a, b = par["concentration"], par["rate"]
            return _where(x > 0, a * math.log(b) + (a - 1) * np.log(x) - b * x - math.lgamma(a))
        if name == "Beta":
            a, b = par["concentration1"], par["concentration0"]
            log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
            return _where((x > 0) & (x < 1), (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - log_beta)
        if name == "ContinuousBernoulli":
            lam = par["probs"]
            inside = (x >= 0) & (x <= 1)
            return _where(inside, x * math.log(lam) + (1 - x) * math.log1p(-lam) + _cb_log_norm(lam))
        if name == "Uniform":
            return _where((x >= par["low"]) & (x < par["high"]), -math.log(par["high"] - par["low"]) + 0 * x)
        if name == "Pareto":
            a, s = par["alpha"], par["scale"]
            return _where(x >= s, math.log(a) + a * math.log(s) - (a + 1) * np.log(x))
        if name == "Poisson":
            r = par["rate"]
            return _where(x >= 0, x * math.log(r) - r - _lgamma(x + 1))
        if name == "Bernoulli":
            pr = par["probs"]
            return _where((x == 0) | (x == 1), x * math.log(pr) + (1 - x) * math.log1p(-pr))
        if name == "Binomial":
            n, pr = par["total_count"], par["probs"]
            inside = (x >= 0) & (x <= n)
            xs = np.clip(x, 0, n)
            log_choose = math.lgamma(n + 1) - _lgamma(xs + 1) - _lgamma(n - xs + 1)
            return _where(inside, log_choose + xs * math.log(pr) + (n - xs) * math.log1p(-pr))
    raise AssertionError(name)


def _integration_plan(name, par):
    """(nodes, weights) covering all but a negligible tail of p's mass: composite Gauss-Legendre on panels
    split at p's kinks and the points where any q's density can jump (0, 1, the q parameters are added by the
    caller); for discrete p, the support points with weight 1."""
    if name == "Bernoulli":
        return np.array([0.0, 1.0]), np.ones(2), []
    if name == "Poisson":
        k = np.arange(0.0, math.ceil(par["rate"] + 40 * math.sqrt(par["rate"]) + 40))
        return k, np.ones_like(k), []
    if name == "Normal":
        return (par["loc"] - 14 * par["scale"], par["loc"] + 14 * par["scale"]), None, []
    if name == "Laplace":
        return (par["loc"] - 45 * par["scale"], par["loc"] + 45 * par["scale"]), None, [par["loc"]]
    if name == "Gumbel":
        return (par["loc"] - 4 * par["scale"], par["loc"] + 45 * par["scale"]), None, []
    if name == "Exponential":
        return (0.0, 45 / par["rate"]), None, []
    if name == "Gamma":
        a = par["concentration"]
        return (0.0, (a + 12 * math.sqrt(a) + 45) / par["rate"]), None, []
    if name in ("Beta", "ContinuousBernoulli"):
        return (0.0, 1.0), None, []
    if name == "Uniform":
        return (par["low"], par["high"]), None, []
    if name == "Pareto":  # integrated over log x (heavy tail)
        return (math.log(par["scale"]), math.log(par["scale"]) + 200 / par["alpha"]), None, []
    raise AssertionError(name)


_GL_X, _GL_W = np.polynomial.legendre.leggauss(40)


def _gauss_legendre(lo, hi, breaks, panels=240):
    cuts = sorted({lo, hi, *(b for b in breaks if lo < b < hi)})
    nodes, weights = [], []
    for a, b in zip(cuts[:-1], cuts[1:]):
        # panels graded towards both ends, where a log density can be singular (x^0.5 log x at 0)
        u = np.linspace(-1, 1, panels // (len(cuts) - 1) + 1)
        edges = a + (b - a) * (1 + np.sin(np.pi / 2 * u)) / 2
        for e0, e1 in zip(edges[:-1], edges[1:]):
            nodes.append((e0 + e1) / 2 + (e1 - e0) / 2 * _GL_X)
            weights.append((e1 - e0) / 2 * _GL_W)
    return np.concatenate(nodes), np.concatenate(weights)


def _q_breaks(name, par):
    points = [0.0, 1.0]
    for key in ("loc", "low", "high", "scale"):
        if key in par:
            points.append(par[key])
    return points


def quadrature_kl(p_name, p_par, q_name, q_par):
    """The integral of p (log p - log q) over p's support, from the numpy densities above."""
    plan, weights, kinks = _integration_plan(p_name, p_par)
    if weights is None:
        lo, hi = plan
        log_domain = p_name == "Pareto"
        breaks = kinks + _q_breaks(q_name, q_par)
        if log_domain:
            breaks = [math.log(b) for b in breaks if b > 0]
        t, weights = _gauss_legendre(lo, hi, breaks)
        x = np.exp(t) if log_domain else t
        if log_domain:
            weights = weights * x  # dx = x dt
    else:
        x = plan
    log_p = _log_density(p_name, p_par, x)
    log_q = _log_density(q_name, q_par, x)
    mass = np.exp(log_p)
    assert abs((mass * weights).sum() - 1) < 1e-9, "the plan misses part of p's mass"
    with np.errstate(invalid="ignore"):
        terms = np.where(mass > 0, mass * (log_p - log_q), 0.0)
    return float((terms * weights).sum())


# ---- the pairs -----------------------------------------------------------------------------------------

# parameters of p (3 values each) and of q (2 values each): every combination is a test point
P_PARAMS = {
    "Normal": dict(loc=[-0.5, 0.3, 1.2], scale=[0.6, 1.0, 2.0]),
    "Laplace": dict(loc=[-0.5, 0.3, 1.5], scale=[0.5, 1.0, 1.5]),
    "Gumbel": dict(loc=[-0.5, 0.2, 1.0], scale=[0.4, 1.0, 1.6]),
    "Exponential": dict(rate=[0.5, 1.0, 3.0]),
    "Gamma": dict(concentration=[1.5, 2.0, 4.0], rate=[0.8, 2.0, 1.2]),
    "Beta": dict(concentration1=[1.5, 2.0, 5.0], concentration0=[2.5, 3.0, 1.5]),
    "ContinuousBernoulli": dict(probs=[0.2, 0.5, 0.85]),  # 0.5: the Taylor branch of the normalizer
    "Uniform": dict(low=[0.1, 0.2, 0.4], high=[0.6, 0.9, 0.95]),
    "Pareto": dict(scale=[0.5, 1.0, 2.0], alpha=[2.5, 4.0, 6.0]),
    "Poisson": dict(rate=[0.5, 2.0, 4.0]),
    "Bernoulli": dict(probs=[0.2, 0.5, 0.9]),
}
Q_PARAMS = {
    "Normal": dict(loc=[0.2, -1.0], scale=[0.8, 1.7]),
    "Laplace": dict(loc=[0.4, -1.0], scale=[0.7, 2.0]),
    "Gumbel": dict(loc=[0.3, -0.8], scale=[0.9, 2.2]),
    "Exponential": dict(rate=[0.7, 2.5]),
    "Gamma": dict(concentration=[0.7, 3.0], rate=[1.0, 2.0]),
    "Beta": dict(concentration1=[0.8, 3.0], concentration0=[1.2, 2.0]),
    "ContinuousBernoulli": dict(probs=[0.3, 0.7]),
    "Uniform": dict(low=[-0.5, -0.1], high=[1.2, 1.5]),  # holding [0, 1]
    "Pareto": dict(scale=[0.05, 0.1], alpha=[1.5, 3.0]),
    "Poisson": dict(rate=[0.7, 3.0]),
    "Bernoulli": dict(probs=[0.3, 0.6]),
    "Binomial": dict(total_count=[3.0, 5.0], probs=[0.3, 0.6]),
}

FINITE = [
    ("Bernoulli", "Poisson"), ("Beta", "ContinuousBernoulli"), ("Beta", "Exponential"), ("Beta", "Gamma"),
    ("Beta", "Normal"), ("Beta", "Uniform"), ("ContinuousBernoulli", "Exponential"),
    ("ContinuousBernoulli", "Normal"), ("ContinuousBernoulli", "Uniform"), ("Uniform", "ContinuousBernoulli"),
    ("Exponential", "Gumbel"), ("Gamma", "Gumbel"), ("Gumbel", "Normal"), ("Normal", "Laplace"),
    ("Pareto", "Exponential"), ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Uniform", "Pareto"),
]
_BOUNDED = ["Beta", "ContinuousBernoulli", "Uniform"]
INFINITE = ([(p, q) for p in ("Normal", "Laplace", "Gumbel") for q in _BOUNDED + ["Exponential", "Gamma", "Pareto"]]
            + [(p, q) for p in ("Exponential", "Gamma") for q in _BOUNDED + ["Pareto"]]
            + [("Pareto", q) for q in _BOUNDED]
            + [("Beta", "Pareto"), ("ContinuousBernoulli", "Pareto"), ("Poisson", "Bernoulli"),
               ("Poisson", "Binomial")])
ALL = FINITE + INFINITE


def _grid(p_name, q_name):
    """Every (p, q) parameter combination, flattened to 6 elementwise pairs."""
    p_par = {k: np.repeat(np.asarray(v, dtype=np.float64), 2) for k, v in P_PARAMS[p_name].items()}
    q_par = {k: np.tile(np.asarray(v, dtype=np.float64), 3) for k, v in Q_PARAMS[q_name].items()}
    return p_par, q_par


def _make(module, name, par, shape=None):
    cls = getattr(module.distributions if module is torch else D, name)
    as_tensor = torch.tensor if module is torch else ember.tensor
    kwargs = {k: as_tensor(np.asarray(v, dtype=np.float64).reshape(shape or np.shape(v))) for k, v in par.items()}
    return cls(**kwargs)


def _numpy(t):
    return t.detach().numpy()


def _scalars(par, i):
    return {k: float(v[i]) for k, v in par.items()}


def test_the_table_has_51_pairs_and_each_is_registered():
    from ember.distributions.kl import _KL
    assert len(set(ALL)) == len(ALL) == 51
    registered = {(a.__name__, b.__name__) for a, b in _KL}
    assert set(ALL) <= registered


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_ember_registers_every_pair_torch_does():
    from ember.distributions.kl import _KL
    theirs = {(a.__name__, b.__name__) for a, b in torch.distributions.kl._KL_REGISTRY}
    ours = {(a.__name__, b.__name__) for a, b in _KL}
    assert theirs <= ours, sorted(theirs - ours)


@pytest.mark.parametrize("p_name,q_name", ALL, ids=[f"{p}-{q}" for p, q in ALL])
def test_against_quadrature(p_name, q_name):
    p_par, q_par = _grid(p_name, q_name)
    kl = _numpy(D.kl_divergence(_make(ember, p_name, p_par), _make(ember, q_name, q_par)))
    assert kl.shape == (6,)
    expected = np.array([quadrature_kl(p_name, _scalars(p_par, i), q_name, _scalars(q_par, i)) for i in range(6)])
    if (p_name, q_name) in INFINITE:
        assert np.isinf(expected).all(), expected  # the quadrature meets q's -inf density on p's support
    np.testing.assert_allclose(kl, expected, rtol=1e-8, atol=1e-10)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("p_name,q_name", ALL, ids=[f"{p}-{q}" for p, q in ALL])
def test_against_torch(p_name, q_name):
    p_par, q_par = _grid(p_name, q_name)
    ours = _numpy(D.kl_divergence(_make(ember, p_name, p_par), _make(ember, q_name, q_par)))
    theirs = _numpy(torch.distributions.kl_divergence(_make(torch, p_name, p_par), _make(torch, q_name, q_par)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p_name,q_name", ALL, ids=[f"{p}-{q}" for p, q in ALL])
def test_batch_broadcasting(p_name, q_name):
    # p with batch (3, 1) against q with batch (2,): a (3, 2) grid equal to the elementwise results
    p = _make(ember, p_name, P_PARAMS[p_name], shape=(3, 1))
    q = _make(ember, q_name, Q_PARAMS[q_name], shape=(2,))
    grid = D.kl_divergence(p, q)
    assert tuple(grid.shape) == (3, 2)
    assert grid.dtype == ember.float64
    p_par, q_par = _grid(p_name, q_name)
    flat = D.kl_divergence(_make(ember, p_name, p_par), _make(ember, q_name, q_par))
    np.testing.assert_allclose(_numpy(grid).reshape(-1), _numpy(flat), rtol=1e-12)


def test_infinite_where_a_moment_diverges():
    # Pareto(alpha <= 1) has no mean and Pareto(alpha <= 2) no variance: the cross entropy to an
    # Exponential or Gamma (linear in x) or to a Normal (quadratic in x) diverges
    alpha = ember.tensor([0.8, 1.0, 1.5, 2.0, 3.0], dtype=ember.float64, requires_grad=True)
    p = D.Pareto(ember.tensor(1.0, dtype=ember.float64), alpha)
    to_exponential = D.kl_divergence(p, D.Exponential(ember.tensor(1.0, dtype=ember.float64)))
    to_gamma = D.kl_divergence(p, D.Gamma(ember.tensor(2.0, dtype=ember.float64), ember.tensor(1.0, dtype=ember.float64)))
    to_normal = D.kl_divergence(p, D.Normal(ember.tensor(0.0, dtype=ember.float64), ember.tensor(1.0, dtype=ember.float64)))
    assert np.isinf(_numpy(to_exponential)[:2]).all() and np.isfinite(_numpy(to_exponential)[2:]).all()
    assert np.isinf(_numpy(to_gamma)[:2]).all() and np.isfinite(_numpy(to_gamma)[2:]).all()
    assert np.isinf(_numpy(to_normal)[:4]).all() and np.isfinite(_numpy(to_normal)[4:]).all()
    # the truncated integral keeps growing with the truncation point where the closed form says inf
    par = {"scale": 1.0, "alpha": 0.5}
    x = np.exp(np.linspace(0, 20, 200001))  # over log x
    dens = np.exp(_log_density("Pareto", par, x))
    cross = -_log_density("Exponential", {"rate": 1.0}, x)
    cumulative = np.cumsum(dens * cross * x) * (20 / 200000)
    assert cumulative[200000] > 10 * cumulative[100000] > 100
    # the discarded branch leaves no NaN in the gradient of the finite entries
    (to_exponential[2:].sum() + to_gamma[2:].sum() + to_normal[4:].sum()).backward()
    grad = _numpy(alpha.grad)
    assert np.isfinite(grad).all() and (grad[:2] == 0).all() and (grad[2:] != 0).all()


def test_uniform_pareto_infinite_below_the_scale_with_finite_gradients():
    low = ember.tensor([0.5, 0.9, 1.0, 1.5], dtype=ember.float64, requires_grad=True)
    p = D.Uniform(low, ember.tensor(3.0, dtype=ember.float64))
    q = D.Pareto(ember.tensor(1.0, dtype=ember.float64), ember.tensor(2.0, dtype=ember.float64))
    kl = D.kl_divergence(p, q)
    values = _numpy(kl)
    assert np.isinf(values[:2]).all() and np.isfinite(values[2:]).all()
    for i in (2, 3):
        par = {"low": float(_numpy(low)[i]), "high": 3.0}
        np.testing.assert_allclose(values[i], quadrature_kl("Uniform", par, "Pareto", {"scale": 1.0, "alpha": 2.0}),
                                   rtol=1e-9)
    kl[2:].sum().backward()
    grad = _numpy(low.grad)
    assert np.isfinite(grad).all() and (grad[:2] == 0).all()


def test_unit_interval_edges():
    f64 = dict(dtype=ember.float64)
    beta = D.Beta(ember.tensor(2.0, **f64), ember.tensor(3.0, **f64))
    cb = D.ContinuousBernoulli(ember.tensor(0.3, **f64))
    uniform_01 = D.Uniform(ember.tensor(0.0, **f64), ember.tensor(1.0, **f64))
    # Uniform(0, 1) holds all of [0, 1]: finite (torch calls these two infinite; the integral is not)
    for p, name, par in ((beta, "Beta", {"concentration1": 2.0, "concentration0": 3.0}),
                         (cb, "ContinuousBernoulli", {"probs": 0.3})):
        np.testing.assert_allclose(D.kl_divergence(p, uniform_01).item(),
                                   quadrature_kl(name, par, "Uniform", {"low": 0.0, "high": 1.0}), rtol=1e-8)
    np.testing.assert_allclose(D.kl_divergence(uniform_01, cb).item(),
                               quadrature_kl("Uniform", {"low": 0.0, "high": 1.0}, "ContinuousBernoulli",
                                             {"probs": 0.3}), rtol=1e-8)
    # and anything less is infinite, in both directions
    for low, high in ((0.01, 1.0), (0.0, 0.99)):
        q = D.Uniform(ember.tensor(low, **f64), ember.tensor(high, **f64))
        assert D.kl_divergence(beta, q).item() == math.inf
        assert D.kl_divergence(cb, q).item() == math.inf
    for low, high in ((-0.01, 0.5), (0.5, 1.01)):
        p = D.Uniform(ember.tensor(low, **f64), ember.tensor(high, **f64))
        assert D.kl_divergence(p, cb).item() == math.inf


def test_chi2_takes_gamma_pairs():
    # Chi2 is a Gamma: it finds Gamma's pairs on either side, as in torch
    f64 = dict(dtype=ember.float64)
    chi2 = D.Chi2(ember.tensor(3.0, **f64))
    gumbel = D.Gumbel(ember.tensor(0.5, **f64), ember.tensor(2.0, **f64))
    np.testing.assert_allclose(D.kl_divergence(chi2, gumbel).item(),
                               quadrature_kl("Gamma", {"concentration": 1.5, "rate": 0.5}, "Gumbel",
                                             {"loc": 0.5, "scale": 2.0}), rtol=1e-8)
    assert D.kl_divergence(gumbel, chi2).item() == math.inf


@pytest.mark.parametrize("make", [
    lambda a, b, c, d: D.kl_divergence(D.Normal(a, b), D.Laplace(c, d)),
    lambda a, b, c, d: D.kl_divergence(D.Pareto(a, b + 2), D.Normal(c, d)),
    lambda a, b, c, d: D.kl_divergence(D.Gamma(a, b), D.Gumbel(c, d)),
    lambda a, b, c, d: D.kl_divergence(D.Beta(a, b), D.Gamma(c, d)),
    lambda a, b, c, d: D.kl_divergence(D.Uniform(a, a + b), D.ContinuousBernoulli(c / 2)),
], ids=["Normal-Laplace", "Pareto-Normal", "Gamma-Gumbel", "Beta-Gamma", "Uniform-ContinuousBernoulli"])
def test_gradcheck(make):
    rng = np.random.default_rng(0)
    values = [[0.2, 0.3], [0.5, 0.6], [0.4, 1.3], [0.8, 1.7]]
    args = [ember.tensor(np.asarray(v) + rng.uniform(0, 0.05, 2), dtype=ember.float64, requires_grad=True)
            for v in values]
    assert ember.autograd.gradcheck(make, args)


# ---- Wishart || Wishart (torch: through its Bregman divergence) ----------------------------------------

def _wisharts(batch_p=(3,)):
    rng = np.random.default_rng(5)
    a = rng.normal(size=batch_p + (3, 3))
    cov_p = a @ np.swapaxes(a, -1, -2) + np.eye(3)
    b = rng.normal(size=(3, 3))
    cov_q = b @ b.T + 0.5 * np.eye(3)
    df_p = np.linspace(3.5, 8.0, int(np.prod(batch_p))).reshape(batch_p)
    return (df_p, cov_p), (np.array(6.0), cov_q)


def _wishart(module, df, cov):
    as_tensor = torch.tensor if module is torch else ember.tensor
    dist = torch.distributions if module is torch else D
    return dist.Wishart(as_tensor(np.asarray(df, dtype=np.float64)), covariance_matrix=as_tensor(cov))


def test_wishart_against_monte_carlo_and_itself():
    (df_p, cov_p), (df_q, cov_q) = _wisharts()
    p, q = _wishart(ember, df_p, cov_p), _wishart(ember, df_q, cov_q)
    kl = _numpy(D.kl_divergence(p, q))
    assert kl.shape == (3,)
    ember.manual_seed(0)
    x = p.sample((20000,))
    ratio = _numpy(p.log_prob(x) - q.log_prob(x))
    se = ratio.std(0) / math.sqrt(len(ratio))
    assert (np.abs(ratio.mean(0) - kl) < 5 * se).all(), (ratio.mean(0), kl, se)
    np.testing.assert_allclose(_numpy(D.kl_divergence(p, p)), 0, atol=1e-12)
    with pytest.raises(ValueError, match="event shapes"):
        D.kl_divergence(p, _wishart(ember, 4.0, np.eye(2)))


def _wishart_bregman(df_p, cov_p, df_q, cov_q):
    """KL as the Bregman divergence A(t_q) - A(t_p) - <t_q - t_p, grad A(t_p)> of the log normalizer
    A(t1, t2) = (t2 + (k+1)/2) (k log 2 - log|-2 t1|) + log G_k(t2 + (k+1)/2) over the natural parameters
    t1 = -cov^-1 / 2, t2 = (df - k - 1) / 2 (exact, and independent of the closed form)."""
    k = cov_p.shape[-1]

    def natural(df, cov):
        return (ember.tensor(-np.linalg.inv(cov) / 2, requires_grad=True),
                ember.tensor((df - k - 1) / 2, dtype=ember.float64, requires_grad=True))

    def log_normalizer(t1, t2):
        half_df = t2 + (k + 1) / 2
        return half_df * (k * math.log(2) - ember.linalg.slogdet(-2 * t1).logabsdet) + ember.mvlgamma(half_df, k)

    tp, tq = natural(df_p, cov_p), natural(df_q, cov_q)
    a_p = log_normalizer(*tp)
    grads = ember.autograd.grad(a_p, tp)
    inner = sum(float(((q - p) * g).sum()) for p, q, g in zip(tp, tq, grads))
    return float(log_normalizer(*tq)) - float(a_p) - inner


def test_wishart_against_the_bregman_divergence():
    (df_p, cov_p), (df_q, cov_q) = _wisharts()
    ours = _numpy(D.kl_divergence(_wishart(ember, df_p, cov_p), _wishart(ember, df_q, cov_q)))
    expected = [_wishart_bregman(df_p[i], cov_p[i], float(df_q), cov_q) for i in range(3)]
    np.testing.assert_allclose(ours, expected, rtol=1e-10)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_wishart_against_torch_one_at_a_time():
    # torch's batched Bregman result sums the df term over the batch (its _sum_rightmost takes the
    # matrix event's two dims off the scalar df's batch), so compare unbatched pairs
    (df_p, cov_p), (df_q, cov_q) = _wisharts()
    ours = _numpy(D.kl_divergence(_wishart(ember, df_p, cov_p), _wishart(ember, df_q, cov_q)))
    for i in range(3):
        theirs = torch.distributions.kl_divergence(_wishart(torch, df_p[i], cov_p[i]), _wishart(torch, df_q, cov_q))
        np.testing.assert_allclose(ours[i], theirs.item(), rtol=1e-10)


def test_wishart_gradcheck():
    def kl(df_p, df_q, a):
        cov = a @ a.transpose(-2, -1) + ember.eye(2, dtype=ember.float64)
        return D.kl_divergence(D.Wishart(df_p, covariance_matrix=cov),
                               D.Wishart(df_q, covariance_matrix=2 * ember.eye(2, dtype=ember.float64)))
    args = [ember.tensor(v, dtype=ember.float64, requires_grad=True)
            for v in ([3.0, 4.5], 5.0, [[0.4, 0.1], [-0.3, 0.8]])]
    assert ember.autograd.gradcheck(kl, args)
