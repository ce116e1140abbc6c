"""The rest of torch's cross-family KL divergences (and Wishart || Wishart,
which torch reaches through its exponential-family Bregman divergence).

Each finite one is written as KL(p || q) = H(p, q) - H(p): the cross entropy
-E_p[log q(x)] needs only a few moments of p (E[x], E[x^2], E[log x], ...),
so one cross-entropy helper per q family serves every p. The pairs where p
puts mass outside q's support are infinite throughout; a few others are
infinite only where a moment of p the formula needs diverges (Pareto with
alpha <= 1 or <= 2)."""
import math

import ember

from .bernoulli import Bernoulli
from .circular_and_unit import ContinuousBernoulli
from .continuous import Gumbel
from .dirichlet import Beta
from .discrete import Binomial, Poisson
from .gamma import Gamma
from .kl import register_kl
from .kl_cross import _infinite_where, _mean_log_uniform
from .normal import Normal
from .simple import Exponential, Laplace, Uniform
from .transformed_families import Pareto
from .wishart import Wishart, _mvdigamma

_EULER_GAMMA = 0.5772156649015329


def _safe(value, usable, fallback):
    """value where usable, else a harmless stand-in: keeps the branch a where() discards (and its gradient)
    free of NaN."""
    return ember.where(usable, value, ember.full_like(value, fallback))


# ---- cross entropies -E_p[log q(x)] from the moments of p ------------------------------------------------

def _cross_entropy_normal(q, mean, second_moment):
    # -log q(x) = log(sigma sqrt(2 pi)) + (x - mu)^2 / (2 sigma^2)
    var = q.scale.pow(2)
    return 0.5 * (2 * math.pi * var).log() + (second_moment - 2 * q.loc * mean + q.loc.pow(2)) / (2 * var)


def _cross_entropy_exponential(q, mean):
    # -log q(x) = -log rate + rate x
    return -q.rate.log() + q.rate * mean


def _cross_entropy_gamma(q, mean, mean_log):
    # -log q(x) = lgamma(a) - a log b - (a - 1) log x + b x
    a, b = q.concentration, q.rate
    return a.lgamma() - a * b.log() - (a - 1) * mean_log + b * mean


def _cross_entropy_gumbel(q, mean, mean_exp_neg_x_over_scale):
    # -log q(x) = log s + z + exp(-z), z = (x - m) / s, and exp(-z) = exp(m / s) exp(-x / s)
    return q.scale.log() + (mean - q.loc) / q.scale + (q.loc / q.scale).exp() * mean_exp_neg_x_over_scale


def _cross_entropy_continuous_bernoulli(q, mean):
    # -log q(x) = -log C(lambda) - x logit(lambda) - log(1 - lambda)
    return -q._log_normalizer() - mean * q.logits - (-q.probs).log1p()


def _cross_entropy_pareto(q, mean_log):
    # -log q(x) = -log alpha - alpha log scale + (alpha + 1) log x   on x >= scale
    return -q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * mean_log


def _beta_moments(p):
    total = p.concentration1 + p.concentration0
    mean = p.concentration1 / total
    second = mean * (1 - mean) / (total + 1) + mean.pow(2)
    mean_log = p.concentration1.digamma() - total.digamma()
    return mean, second, mean_log


# ---- finite pairs -----------------------------------------------------------------------------------------

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # x in {0, 1}: -log q(x) = rate - x log rate (log x! = 0)
    return -p.entropy() + q.rate - p.probs * q.rate.log()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _cross_entropy_continuous_bernoulli(q, p.mean)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() + _cross_entropy_exponential(q, p.mean)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    mean, _, mean_log = _beta_moments(p)
    return -p.entropy() + _cross_entropy_gamma(q, mean, mean_log)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean, second, _ = _beta_moments(p)
    return -p.entropy() + _cross_entropy_normal(q, mean, second)


def _uniform_covers_unit_interval(q):
    return (q.low <= 0) & (q.high >= 1)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    kl = -p.entropy() + (q.high - q.low).log()
    return _infinite_where(~_uniform_covers_unit_interval(q), kl)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() + _cross_entropy_exponential(q, p.mean)


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    mean = p.mean
    return -p.entropy() + _cross_entropy_normal(q, mean, p.variance + mean.pow(2))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    # infinite only where [low, high) misses part of [0, 1] (torch also calls a Uniform reaching exactly 0 or 1
    # infinite; the integral is finite there)
    kl = -p.entropy() + (q.high - q.low).log()
    return _infinite_where(~_uniform_covers_unit_interval(q), kl)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    # infinite where p has mass outside [0, 1] (torch already where p.low <= 0 or p.high >= 1)
    kl = -p.entropy() + _cross_entropy_continuous_bernoulli(q, (p.low + p.high) / 2)
    return _infinite_where((p.low < 0) | (p.high > 1), kl)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    # E[exp(-x / s)] = rate / (rate + 1 / s), the Laplace transform of the exponential density
    rs = p.rate * q.scale
    return -p.entropy() + _cross_entropy_gumbel(q, p.rate.reciprocal(), rs / (rs + 1))


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    # E[exp(-x / s)] = (1 + 1 / (rate s))^-a, the Laplace transform of the gamma density
    a, b = p.concentration, p.rate
    laplace = (1 + (b * q.scale).reciprocal()).pow(-a)
    return -p.entropy() + _cross_entropy_gumbel(q, a / b, laplace)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    mean = p.loc + p.scale * _EULER_GAMMA
    var = (math.pi ** 2 / 6) * p.scale.pow(2)
    neg_entropy = -p.scale.log() - (1 + _EULER_GAMMA)
    return neg_entropy + _cross_entropy_normal(q, mean, var + mean.pow(2))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # -log q(x) = log(2 b) + |x - m| / b; for x ~ N(mu, sigma^2) and d = mu - m,
    # E|x - m| = sigma sqrt(2 / pi) exp(-d^2 / (2 sigma^2)) + d erf(d / (sigma sqrt 2))
    d = p.loc - q.loc
    z = d / p.scale
    mean_abs = math.sqrt(2 / math.pi) * p.scale * (-0.5 * z.pow(2)).exp() + d * ember.erf(z * math.sqrt(0.5))
    neg_entropy = -p.scale.log() - 0.5 * (1 + math.log(2 * math.pi))
    return neg_entropy + (2 * q.scale).log() + mean_abs / q.scale


def _pareto_mean_log(p):
    return p.scale.log() + p.alpha.reciprocal()


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    finite = p.alpha > 1  # E[x] diverges otherwise
    a = _safe(p.alpha, finite, 2.0)
    kl = -p.entropy() + _cross_entropy_exponential(q, a * p.scale / (a - 1))
    return _infinite_where(~finite, kl)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    finite = p.alpha > 1
    a = _safe(p.alpha, finite, 2.0)
    kl = -p.entropy() + _cross_entropy_gamma(q, a * p.scale / (a - 1), _pareto_mean_log(p))
    return _infinite_where(~finite, kl)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    finite = p.alpha > 2  # E[x^2] diverges otherwise
    a = _safe(p.alpha, finite, 3.0)
    mean = a * p.scale / (a - 1)
    second = a * p.scale.pow(2) / (a - 2)
    kl = -p.entropy() + _cross_entropy_normal(q, mean, second)
    return _infinite_where(~finite, kl)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    outside = p.low < q.scale  # p has mass below q's support
    low = ember.where(outside, q.scale.expand_as(outside), p.low)
    high = ember.where(outside, 2 * q.scale.expand_as(outside), p.high)
    kl = -p.entropy() + _cross_entropy_pareto(q, _mean_log_uniform(low, high))
    return _infinite_where(outside, kl)


# ---- pairs where p has mass outside q's support: infinite throughout ---------------------------------------

def _register_infinite(type_p, types_q, param):
    """Registers KL(type_p || Q) = inf for each Q; param names a tensor of p that gives the dtype and
    device (the shape is the broadcast batch shape of p and q)."""
    def kl(p, q):
        like = getattr(p, param)
        shape = ember.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
        return ember.full(shape, math.inf, dtype=like.dtype, device=like.device)

    kl.__name__ = f"_kl_{type_p.__name__.lower()}_infinity"
    for type_q in types_q:
        register_kl(type_p, type_q)(kl)


_BOUNDED = (Beta, ContinuousBernoulli, Uniform)  # supports inside a bounded interval
# the whole real line has mass outside anything bounded or bounded below
for _p in (Normal, Laplace, Gumbel):
    _register_infinite(_p, _BOUNDED + (Exponential, Gamma, Pareto), "loc")
# (0, inf) reaches past any bounded support and below Pareto's scale
_register_infinite(Exponential, _BOUNDED + (Pareto,), "rate")
_register_infinite(Gamma, _BOUNDED + (Pareto,), "concentration")
# [scale, inf) is unbounded
_register_infinite(Pareto, _BOUNDED, "scale")
# [scale, inf) with scale > 0 never holds (0, scale), where these put mass
_register_infinite(Beta, (Pareto,), "concentration1")
_register_infinite(ContinuousBernoulli, (Pareto,), "probs")
# counts without an upper bound
_register_infinite(Poisson, (Bernoulli, Binomial), "rate")


# ---- Wishart || Wishart ---------------------------------------------------------------------------------

@register_kl(Wishart, Wishart)
def _kl_wishart_wishart(p, q):
    # with E_p[X] = n_p S_p and E_p[log|X|] = mvdigamma_k(n_p / 2) + k log 2 + log|S_p|:
    # n_q/2 (log|S_q| - log|S_p|) + n_p/2 (tr(S_q^-1 S_p) - k) + log G_k(n_q/2) - log G_k(n_p/2)
    #   + (n_p - n_q)/2 mvdigamma_k(n_p / 2)
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Wisharts with different event shapes cannot be computed")
    k = p.event_shape[-1]
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    batch = ember.broadcast_shapes(tuple(Lp.shape[:-2]), tuple(Lq.shape[:-2]))
    # tr(S_q^-1 S_p) = || L_q^-1 L_p ||_F^2
    trace = ember.linalg.solve_triangular(Lq.expand(*batch, k, k), Lp.expand(*batch, k, k), upper=False)
    trace = trace.pow(2).sum([-2, -1])
    n_p, n_q = p.df, q.df
    return (n_q * (q._half_log_det() - p._half_log_det()) + n_p / 2 * (trace - k)
            + ember.mvlgamma(n_q / 2, k) - ember.mvlgamma(n_p / 2, k) + (n_p - n_q) / 2 * _mvdigamma(n_p / 2, k))
