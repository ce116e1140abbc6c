"""Normal(loc, scale)."""
import math

import ember

from . import constraints as _c
from .distribution import broadcast_all
from .exp_family import ExponentialFamily


class Normal(ExponentialFamily):
    support = _c.real
    has_rsample = True
    _param_names = ("loc", "scale")
    _expand_params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, (), validate_args)
        self._check(self.scale > 0, "scale must be positive")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = ember.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        self._validate_sample(value)
        var = self.scale * self.scale
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - 0.5 * math.log(2 * math.pi)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    # exponential family: natural parameters, log normalizer, E[log h(x)] (see exp_family.py)
    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()

    _mean_carrier_measure = 0

    def cdf(self, value):
        return 0.5 * (1 + ember.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        # the quantile: loc + scale * sqrt(2) * erfinv(2p - 1)
        return self.loc + self.scale * ember.erfinv(2 * value - 1) * math.sqrt(2)
