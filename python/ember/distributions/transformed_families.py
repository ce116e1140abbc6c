"""Distributions defined as transforms of simpler ones (as torch defines
them): HalfCauchy, Pareto, Weibull, InverseGamma, Kumaraswamy,
LogisticNormal. Sampling, rsample and log_prob come from
TransformedDistribution; moments and entropies are the closed forms."""
import math

import ember

from . import constraints
from .continuous import Cauchy
from .distribution import broadcast_all
from .gamma import Gamma
from .normal import Normal
from .simple import Exponential, Uniform
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform, AffineTransform, ExpTransform, PowerTransform, StickBreakingTransform

_EULER_GAMMA = 0.5772156649015329


def _where_else(cond, value, fill):
    return ember.where(cond, value, ember.full_like(value, fill))


class HalfCauchy(TransformedDistribution):
    """|x| for x ~ Cauchy(0, scale)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _param_names = ("scale",)

    def __init__(self, scale, validate_args=None):
        (self.scale,) = broadcast_all(scale)
        super().__init__(Cauchy(ember.zeros_like(self.scale), self.scale, validate_args=False), AbsTransform(),
                         validate_args)

    @property
    def mean(self):
        return ember.full_like(self.scale, math.inf)

    @property
    def mode(self):
        return ember.zeros_like(self.scale)

    @property
    def variance(self):
        return ember.full_like(self.scale, math.inf)

    def log_prob(self, value):
        self._validate_sample(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return ember.where(value >= 0, lp, ember.full_like(lp, -math.inf))

    def cdf(self, value):
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class Pareto(TransformedDistribution):
    """scale * exp(x), x ~ Exponential(alpha)."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True
    _param_names = ("scale", "alpha")

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=False),
                         [ExpTransform(), AffineTransform(0.0, self.scale)], validate_args)

    @property
    def support(self):
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        return _where_else(self.alpha > 1, a * self.scale / (a - 1), math.inf)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        return _where_else(self.alpha > 2, self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2)), math.inf)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class Weibull(TransformedDistribution):
    """scale * x ** (1 / concentration), x ~ Exponential(1)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _param_names = ("scale", "concentration")

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        super().__init__(Exponential(ember.ones_like(self.scale), validate_args=False),
                         [PowerTransform(self.concentration_reciprocal), AffineTransform(0.0, self.scale)],
                         validate_args)

    @property
    def mean(self):
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k).pow(self.concentration_reciprocal)

    @property
    def variance(self):
        k_inv = self.concentration_reciprocal
        return self.scale.pow(2) * ((1 + 2 * k_inv).lgamma().exp() - (2 * (1 + k_inv).lgamma()).exp())

    def entropy(self):
        return (_EULER_GAMMA * (1 - self.concentration_reciprocal) + (self.scale / self.concentration).log() + 1)


class InverseGamma(TransformedDistribution):
    """1 / x, x ~ Gamma(concentration, rate)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _param_names = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(Gamma(self.concentration, self.rate, validate_args=False), PowerTransform(-1.0),
                         validate_args)

    @property
    def mean(self):
        a = self.concentration
        return _where_else(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        return _where_else(a > 2, self.rate.pow(2) / ((a - 1).pow(2) * (a - 2)), math.inf)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()


def _kumaraswamy_moment(a, b, n):
    """E[x^n] of Kumaraswamy(a, b): b * B(1 + n/a, b)."""
    arg = 1 + n / a
    return b * (arg.lgamma() + b.lgamma() - (arg + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """(1 - u ** (1 / concentration0)) ** (1 / concentration1), u ~ Uniform(0, 1)."""
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _param_names = ("concentration1", "concentration0")

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(ember.full_like(self.concentration0, 0.0), ember.full_like(self.concentration0, 1.0),
                       validate_args=False)
        super().__init__(base, [PowerTransform(self.concentration0.reciprocal()), AffineTransform(1.0, -1.0),
                                PowerTransform(self.concentration1.reciprocal())], validate_args)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)).pow(a.reciprocal())
        return _where_else((a >= 1) & (b >= 1) & ~((a == 1) & (b == 1)), mode, math.nan)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _kumaraswamy_moment(a, b, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = (b + 1).digamma() + _EULER_GAMMA
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic_b - a.log() - b.log()


class LogisticNormal(TransformedDistribution):
    """The stick-breaking transform of a Normal vector: a distribution on the simplex (one more coordinate)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True
    _param_names = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = broadcast_all(loc, scale)
        if loc.dim() == 0:
            loc, scale = loc.reshape(1), scale.reshape(1)
        self.loc, self.scale = loc, scale
        super().__init__(Normal(loc, scale, validate_args=False), StickBreakingTransform(), validate_args)
