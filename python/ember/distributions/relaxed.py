"""Relaxed (concrete / Gumbel-softmax) distributions: continuous stand-ins for
Bernoulli and one-hot categorical draws, reparameterized, sharper as the
temperature drops."""
import math

import ember
import ember.nn.functional as F

from . import constraints
from .distribution import Distribution, broadcast_all
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform, SigmoidTransform


def _uniform_open(shape, like):
    info = ember.finfo(like.dtype)
    return ember.rand(*shape, dtype=like.dtype, device=like.device).clamp(min=info.tiny, max=1 - info.eps)


def _probs_logits(name, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either `probs` or `logits` must be specified, but not both.")


class LogitRelaxedBernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True
    _param_names = ("probs",)

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        _probs_logits("LogitRelaxedBernoulli", probs, logits)
        self.temperature = temperature
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            eps = ember.finfo(self.probs.dtype).eps
            p = self.probs.clamp(eps, 1 - eps)
            self.logits = p.log() - (-p).log1p()
            self._derived = ("logits",)
        else:
            (self.logits,) = broadcast_all(logits)
            self.probs = ember.sigmoid(self.logits)
            self._derived = ("probs",)
        super().__init__(self.logits.shape, (), validate_args)

    def _constructor_kwargs(self):
        given = "logits" if "probs" in self._derived else "probs"
        return {"temperature": self.temperature, given: getattr(self, given)}

    def rsample(self, sample_shape=()):
        u = _uniform_open(self._extended_shape(sample_shape), self.logits)
        return (self.logits + u.log() - (-u).log1p()) / self.temperature

    def log_prob(self, value):
        self._validate_sample(value)
        diff = self.logits - value * self.temperature
        t = self.temperature
        log_t = t.log() if isinstance(t, ember.Tensor) else math.log(t)
        return log_t + diff - 2 * F.softplus(diff)


class _RelaxedOverBase(TransformedDistribution):
    """A relaxed distribution as a transform of its log/logit base: the base's parameters, read through."""

    def _constructor_kwargs(self):
        return self.base_dist._constructor_kwargs()

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


class RelaxedBernoulli(_RelaxedOverBase):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=False)
        self._validate_args = base._validate_args


class ExpRelaxedCategorical(Distribution):
    """log of a RelaxedOneHotCategorical draw (numerically kinder to score)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        from .categorical import Categorical
        _probs_logits("ExpRelaxedCategorical", probs, logits)
        self._categorical = Categorical(probs, logits, validate_args=False)
        self.temperature = temperature
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        self._derived = ("logits",) if probs is not None else ("probs",)
        super().__init__(self._categorical.batch_shape, self.logits.shape[-1:], validate_args)

    def _constructor_kwargs(self):
        given = "logits" if "probs" in self._derived else "probs"
        return {"temperature": self.temperature, given: getattr(self, given)}

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        gumbels = -(-_uniform_open(shape, self.logits).log()).log()
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value):
        self._validate_sample(value)
        k = self.logits.shape[-1]
        t = self.temperature
        log_t = t.log() if isinstance(t, ember.Tensor) else math.log(t)
        score = self.logits - value * t
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + math.lgamma(k) + (k - 1) * log_t


class RelaxedOneHotCategorical(_RelaxedOverBase):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=False)
        self._validate_args = base._validate_args
