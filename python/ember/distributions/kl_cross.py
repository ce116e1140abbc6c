"""KL divergences between different families (the closed forms torch
registers), and the generic one between two members of one exponential family
(the Bregman divergence of the log normalizer)."""
import math

import ember

from .circular_and_unit import ContinuousBernoulli
from .continuous import Gumbel
from .dirichlet import Beta
from .exp_family import ExponentialFamily, differentiable_params
from .gamma import Gamma
from .kl import register_kl
from .normal import Normal
from .simple import Exponential, Laplace, Uniform
from .transformed_families import Pareto
from .transforms import _sum_rightmost

_HALF_LOG_2PI_E = 0.5 * (1 + math.log(2 * math.pi))


def _infinite_where(outside, kl):
    return ember.where(outside, ember.full_like(kl, math.inf), kl)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_exponential_family(p, q):
    # F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    p_params, tracked = differentiable_params(p._natural_params)
    q_params = q._natural_params
    with ember.enable_grad():
        log_norm = p._log_normalizer(*p_params)
        grads = ember.autograd.grad(log_norm.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_norm
    for pp, qp, g in zip(p_params, q_params, grads):
        result = result - _sum_rightmost((qp - pp) * g, len(q.event_shape))
    return result if tracked or any(t.requires_grad for t in q_params) else result.detach()


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    alpha_ratio = q.alpha / p.alpha
    kl = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return _infinite_where(p.scale < q.scale, kl)  # p puts mass below q's support


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var = q.scale.pow(2)
    rate2 = p.rate.pow(2)
    t1 = 0.5 * (rate2 * var * 2 * math.pi).log()
    return t1 - 1 + (1 / rate2 - q.loc / p.rate + 0.5 * q.loc.pow(2)) / var


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    a, b = p.concentration, p.rate
    var = q.scale.pow(2)
    t1 = 0.5 * (b.pow(2) * var * 2 * math.pi).log() - a - a.lgamma()
    t2 = 0.5 * (a.pow(2) + a) / b.pow(2)
    return t1 + (a - 1) * a.digamma() + (t2 - q.loc * a / b + 0.5 * q.loc.pow(2)) / var


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var = q.scale.pow(2)
    ratio = p.scale.pow(2) / var
    t1 = 0.5 * (2 * ratio / math.pi).log()
    return -t1 + ratio + (0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)) / var - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_ratio = p.loc / q.scale
    var_ratio = (p.scale / q.scale).pow(2)
    loc_ratio = q.loc / q.scale
    t3 = (-mean_ratio + 0.5 * var_ratio + loc_ratio).exp()
    return -0.5 * var_ratio.log() + mean_ratio - loc_ratio + t3 - _HALF_LOG_2PI_E


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    kl = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _infinite_where(p.low < 0, kl)


def _mean_log_uniform(low, high):
    """E[log x] for x ~ Uniform(low, high), low >= 0: (h log h - h - l log l + l) / (h - l)."""
    return (ember.xlogy(high, high) - high - ember.xlogy(low, low) + low) / (high - low)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    a, b = q.concentration, q.rate
    low = p.low.clamp(min=0)
    kl = (-(p.high - p.low).log() - a * b.log() + a.lgamma() - (a - 1) * _mean_log_uniform(low, p.high)
          + b * (p.high + p.low) / 2)
    return _infinite_where(p.low < 0, kl)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    a, b = q.concentration1, q.concentration0
    low, high = p.low.clamp(0, 1), p.high.clamp(0, 1)
    log_beta = a.lgamma() + b.lgamma() - (a + b).lgamma()
    mean_log_x = _mean_log_uniform(low, high)
    mean_log_1mx = _mean_log_uniform(1 - high, 1 - low)
    kl = -(p.high - p.low).log() - (a - 1) * mean_log_x - (b - 1) * mean_log_1mx + log_beta
    return _infinite_where((p.low < 0) | (p.high > 1), kl)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli(p, q):
    # log p(x) = log C(p) + x logit(p) + log(1 - p): the expectation only needs E_p[x]
    return (p.mean * (p.logits - q.logits) + p._log_normalizer() + (-p.probs).log1p()
            - q._log_normalizer() - (-q.probs).log1p())
