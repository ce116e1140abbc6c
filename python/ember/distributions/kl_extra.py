"""Closed-form KL divergences for the distributions beyond the first set
(the pairs torch registers), added to kl_divergence's table."""
import math

import ember
import ember.nn.functional as F

from .continuous import Cauchy, Gumbel, HalfNormal
from .discrete import Binomial, Geometric, Poisson
from .dirichlet import Beta, Dirichlet
from .gamma import Gamma
from .kl import kl_divergence, register_kl
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .simple import Exponential, Uniform
from .transformed_distribution import TransformedDistribution
from .transforms import _sum_rightmost

_EULER_GAMMA = 0.5772156649015329


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s1, s2 = a1 + b1, a2 + b2
    t1 = a2.lgamma() + b2.lgamma() + s1.lgamma()
    t2 = a1.lgamma() + b1.lgamma() + s2.lgamma()
    return t1 - t2 + (a1 - a2) * a1.digamma() + (b1 - b2) * b1.digamma() + (s2 - s1) * s1.digamma()


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    a1, r1, a2, r2 = p.concentration, p.rate, q.concentration, q.rate
    return (a2 * (r1 / r2).log() + a2.lgamma() - a1.lgamma() + (a1 - a2) * a1.digamma()
            + (r2 - r1) * (a1 / r1))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a1, a2 = p.concentration, q.concentration
    s1 = a1.sum(-1)
    t1 = s1.lgamma() - a2.sum(-1).lgamma()
    t2 = (a1.lgamma() - a2.lgamma()).sum(-1)
    return t1 - t2 + ((a1 - a2) * (a1.digamma() - s1.digamma().unsqueeze(-1))).sum(-1)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + ct1 * _EULER_GAMMA + t3 - (1 + _EULER_GAMMA)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return ember.xlogy(p.rate, p.rate) - p.rate * q.rate.log() - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if not bool((p.total_count == q.total_count).all()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    n = p.total_count
    t1 = n * (p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits)))
    t2 = n * ((1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits)))
    return t1 + t2


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    k = p.event_shape[0]
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    batch = ember.broadcast_shapes(tuple(Lp.shape[:-2]), tuple(Lq.shape[:-2]))
    # trace(Sq^-1 Sp) = || Lq^-1 Lp ||_F^2
    solved = ember.linalg.solve_triangular(Lq.expand(*batch, k, k), Lp.expand(*batch, k, k), upper=False)
    trace = solved.pow(2).sum([-2, -1])
    maha = _batch_mahalanobis(Lq, q.loc - p.loc)
    half_log_det = q._half_log_det() - p._half_log_det()
    return half_log_det + 0.5 * (trace + maha - k)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    num = (p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)
    return (num / (4 * p.scale * q.scale)).log()


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    ratio = (p.scale / q.scale).pow(2)
    return 0.5 * (ratio - 1 - ratio.log())


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError("kl_divergence: TransformedDistributions with different transforms")
    if p.event_shape != q.event_shape:
        raise NotImplementedError("kl_divergence: TransformedDistributions with different event shapes")
    extra = len(p.event_shape) - len(p.base_dist.event_shape)
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    a = q.concentration
    return -a * ratio.log() + ratio + a.lgamma() + a * _EULER_GAMMA - (1 + _EULER_GAMMA)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration / p.rate)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(2 * math.pi) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common = q.scale / (p.high - p.low)
    high_loc = (p.high - q.loc) / q.scale
    low_loc = (p.low - q.loc) / q.scale
    t1 = common.log() + 0.5 * (high_loc + low_loc)
    t2 = common * ((-high_loc).exp() - (-low_loc).exp())
    return t1 - t2


def _as_full_mvn(d):
    if isinstance(d, MultivariateNormal):
        return d
    return MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix, validate_args=False)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_mvn(p, q):
    # through the dense covariances (a k x k Cholesky each): exact, and the event sizes KL is used at are small
    return _kl_mvn_mvn(_as_full_mvn(p), _as_full_mvn(q))
