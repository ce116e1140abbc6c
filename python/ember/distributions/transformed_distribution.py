"""TransformedDistribution(base, transforms): the law of t_n(...t_1(x)) for x
drawn from base; log_prob by the change of variables formula."""
import ember

from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, Transform, _sum_rightmost


class TransformedDistribution(Distribution):
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not (isinstance(transforms, (list, tuple)) and all(isinstance(t, Transform) for t in transforms)):
            raise ValueError(f"transforms must be a Transform or a list of Transforms, but was {transforms}")
        self.transforms = list(transforms)
        chain = ComposeTransform(self.transforms)
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {chain.domain.event_dim}, "
                             f"but got {base_shape}.")
        forward_shape = tuple(chain.forward_shape(base_shape))
        if tuple(chain.inverse_shape(forward_shape)) != base_shape:
            raise ValueError("TransformedDistribution: the transforms would broadcast the base distribution's "
                             f"shape {base_shape} to {forward_shape}; expand the base distribution first")
        reinterpreted = chain.domain.event_dim - base_event_dim
        self.base_dist = Independent(base_distribution, reinterpreted) if reinterpreted > 0 else base_distribution
        event_dim = chain.codomain.event_dim + max(base_event_dim - chain.domain.event_dim, 0)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args)

    def expand(self, batch_shape, _instance=None):
        if type(self) is not TransformedDistribution:
            return super().expand(batch_shape)  # the named subclasses rebuild from their parameters
        shape = tuple(batch_shape) + tuple(self.event_shape)
        base_shape = tuple(ComposeTransform(self.transforms).inverse_shape(shape))
        cut = len(base_shape) - len(self.base_dist.event_shape)
        new = TransformedDistribution(self.base_dist.expand(base_shape[:cut]), self.transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        extra = len(self.event_shape) - support.event_dim
        return constraints.independent(support, extra) if extra > 0 else support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        with ember.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        self._validate_sample(value)
        event_dim = len(self.event_shape)
        lp = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            lp = lp - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return lp + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self._monotonize_cdf(value)
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value
