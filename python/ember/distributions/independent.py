"""Independent(base, n): the base distribution's last n batch dims become
event dims (log_prob sums over them)."""
from .distribution import Distribution


class Independent(Distribution):
    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = int(reinterpreted_batch_ndims)
        batch = tuple(base_distribution.batch_shape)
        if n > len(batch):
            raise ValueError(f"Independent: reinterpreted_batch_ndims ({n}) is more than the base distribution's "
                             f"batch dims ({batch})")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        split = len(batch) - n
        super().__init__(batch[:split], batch[split:] + tuple(base_distribution.event_shape), validate_args)

    @property
    def support(self):
        from . import constraints
        support = self.base_dist.support
        return None if support is None else constraints.independent(support, self.reinterpreted_batch_ndims)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        base_batch = tuple(self.base_dist.batch_shape)
        moved = base_batch[len(base_batch) - self.reinterpreted_batch_ndims:]
        new = Independent(self.base_dist.expand(batch_shape + moved), self.reinterpreted_batch_ndims,
                          validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def _sum_rightmost(self, t):
        for _ in range(self.reinterpreted_batch_ndims):
            t = t.sum(-1)
        return t

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy())
