"""Uniform(low, high), Exponential(rate), Laplace(loc, scale)."""
import math

import ember

from . import constraints as _c
from .distribution import Distribution, broadcast_all
from .exp_family import ExponentialFamily


class Uniform(Distribution):
    has_rsample = True
    _param_names = ("low", "high")
    _expand_params = ("low", "high")

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, (), validate_args)
        self._check(self.low < self.high, "low must be less than high")

    @property
    def support(self):
        return _c.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.low + self.high) / 2

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape=()):
        u = ember.rand(*self._extended_shape(sample_shape), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        inside = ((value >= self.low) & (value < self.high)).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return self.low + value * (self.high - self.low)

    def entropy(self):
        return (self.high - self.low).log()


class Exponential(ExponentialFamily):
    support = _c.nonnegative
    has_rsample = True
    _param_names = ("rate",)
    _expand_params = ("rate",)

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, (), validate_args)
        self._check(self.rate > 0, "rate must be positive")

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return ember.zeros_like(self.rate)

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        u = ember.rand(*self._extended_shape(sample_shape), dtype=self.rate.dtype, device=self.rate.device)
        return -ember.log1p(-u) / self.rate  # inverse cdf; u < 1, so the log is finite

    def log_prob(self, value):
        self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        return 1 - ember.exp(-self.rate * value)

    def icdf(self, value):
        return -ember.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    # exponential family: natural parameters, log normalizer, E[log h(x)] (see exp_family.py)
    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()

    _mean_carrier_measure = 0


class Laplace(Distribution):
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
    def variance(self):
        return 2 * self.scale * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # u uniform in (-1, 1); the inverse cdf of the Laplace.
        eps = ember.finfo(self.loc.dtype).eps
        u = ember.rand(*shape, dtype=self.loc.dtype, device=self.loc.device) * 2 - 1
        u = u.clamp(-1 + eps, 1 - eps)
        return self.loc - self.scale * u.sign() * ember.log1p(-u.abs())

    def log_prob(self, value):
        self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * ember.expm1(-z.abs() / self.scale)

    def entropy(self):
        return 1 + (2 * self.scale).log()
