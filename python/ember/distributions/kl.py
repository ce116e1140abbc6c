"""kl_divergence(p, q) = E_p[log p - log q], for the pairs that have a closed
form; register_kl adds more."""
import math

import ember
import ember.nn.functional as F

from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical
from .independent import Independent
from .normal import Normal
from .simple import Exponential, Laplace, Uniform

_KL = {}


def register_kl(type_p, type_q):
    """Decorator: @register_kl(P, Q) def kl(p, q) registers KL(P || Q)."""
    def decorate(fn):
        _KL[(type_p, type_q)] = fn
        return fn
    return decorate


def kl_divergence(p, q):
    for tp in type(p).__mro__:
        for tq in type(q).__mro__:
            fn = _KL.get((tp, tq))
            if fn is not None:
                return fn(p, q)
    raise NotImplementedError(f"kl_divergence: no formula for {type(p).__name__} || {type(q).__name__}; "
                              "register one with ember.distributions.register_kl")


@register_kl(Normal, Normal)
def _kl_normal(p, q):
    ratio = (p.scale / q.scale) ** 2
    return 0.5 * (ratio + ((p.loc - q.loc) / q.scale) ** 2 - 1 - ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    return ember.where(p.probs == 0, ember.zeros_like(t), t).sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot(p, q):
    return _kl_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform(p, q):
    inside = (q.low <= p.low) & (p.high <= q.high)
    kl = ((q.high - q.low) / (p.high - p.low)).log()
    return ember.where(inside, kl, ember.full_like(kl, math.inf))


@register_kl(Exponential, Exponential)
def _kl_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace(p, q):
    ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -ratio.log() + diff / q.scale + ratio * ember.exp(-diff / p.scale) - 1


@register_kl(Independent, Independent)
def _kl_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("kl_divergence: Independent distributions with different event dims")
    return p._sum_rightmost(kl_divergence(p.base_dist, q.base_dist))
