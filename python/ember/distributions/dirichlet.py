"""Dirichlet(concentration) and Beta(concentration1, concentration0), drawn as
normalized Gamma draws: the draws carry the Gamma's implicit reparameterization
gradient through the normalization, which is an exact pathwise gradient."""
import ember

from . import constraints
from .distribution import broadcast_all
from .exp_family import ExponentialFamily
from .gamma import standard_gamma


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _param_names = ("concentration",)

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        a = (self.concentration - 1).clamp(min=0)
        mode = a / a.sum(-1, keepdim=True)
        # some concentration < 1: the density is unbounded at the corners; torch puts the mode at that vertex
        below = (self.concentration < 1).all(-1, keepdim=True)
        corner = ember.nn.functional.one_hot(self.concentration.argmax(-1), a.shape[-1]).to(a.dtype)
        return ember.where(below, corner, mode)

    @property
    def variance(self):
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = standard_gamma(self.concentration.expand(*shape))
        x = g / g.sum(-1, keepdim=True)
        info = ember.finfo(x.dtype)
        return x.clamp(min=info.tiny, max=1 - info.eps)

    def log_prob(self, value):
        self._validate_sample(value)
        a = self.concentration
        return (ember.xlogy(a - 1.0, value).sum(-1) + a.sum(-1).lgamma() - a.lgamma().sum(-1))

    # exponential family: natural parameters, log normalizer, E[log h(x)] (see exp_family.py)
    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()

    @property
    def _mean_carrier_measure(self):
        # h(x) = 1 / prod(x_i) with these natural parameters: E[log h] = -sum_i E[log x_i]
        a = self.concentration
        return -(a.digamma() - a.sum(-1, keepdim=True).digamma()).sum(-1)

    def entropy(self):
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return (a.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() - ((a - 1.0) * a.digamma()).sum(-1))


class Beta(ExponentialFamily):
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _param_names = ("concentration1", "concentration0")

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(ember.stack([self.concentration1, self.concentration0], -1),
                                    validate_args=False)
        super().__init__(self.concentration1.shape, (), validate_args)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        self._validate_sample(value)
        heads_tails = ember.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    def entropy(self):
        return self._dirichlet.entropy()

    # exponential family: natural parameters, log normalizer, E[log h(x)] (see exp_family.py)
    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()

    @property
    def _mean_carrier_measure(self):
        return self._dirichlet._mean_carrier_measure
