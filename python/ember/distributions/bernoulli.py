"""Bernoulli(probs=... or logits=...)."""
import ember
import ember.nn.functional as F

from . import constraints as _c
from .distribution import broadcast_all
from .exp_family import ExponentialFamily


def _probs_or_logits(name, probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: pass exactly one of probs or logits")


class Bernoulli(ExponentialFamily):
    support = _c.boolean
    _param_names = ("probs",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        _probs_or_logits("Bernoulli", probs, logits)
        self._given_logits = logits is not None
        if logits is not None:
            (self.logits,) = broadcast_all(logits)
            self.probs = ember.sigmoid(self.logits)
        else:
            (self.probs,) = broadcast_all(probs)
            # probs of exactly 0 or 1 give finite logits, as torch's probs_to_logits does
            eps = ember.finfo(self.probs.dtype).eps
            clamped = self.probs.clamp(eps, 1 - eps)
            self.logits = ember.log(clamped) - ember.log1p(-clamped)
        super().__init__(self.probs.shape, (), validate_args)
        if not self._given_logits:
            self._check((self.probs >= 0) & (self.probs <= 1), "probs must lie in [0, 1]")

    has_enumerate_support = True

    def enumerate_support(self, expand=True):
        values = ember.arange(2, dtype=self.probs.dtype, device=self.probs.device)
        values = values.view(-1, *([1] * len(self.batch_shape)))
        return values.expand(-1, *self.batch_shape) if expand else values

    def _constructor_kwargs(self):
        return {"logits": self.logits} if self._given_logits else {"probs": self.probs}

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return (self.probs > 0.5).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def _sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return ember.bernoulli(self.probs.expand(*shape))

    def log_prob(self, value):
        self._validate_sample(value)  # 0/1 values only, as torch
        # -BCE with logits: stable for logits of any size.
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    # exponential family: natural parameters, log normalizer, E[log h(x)] (see exp_family.py)
    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        return F.softplus(x)

    _mean_carrier_measure = 0

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
