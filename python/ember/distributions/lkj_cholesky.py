"""LKJCholesky(dim, concentration): the lower Cholesky factor of a dim x dim
correlation matrix C with density proportional to det(C)^(concentration - 1),
sampled by the onion method of Lewandowski, Kurowicka and Joe (2009): row k
takes a Beta(k/2, .)-distributed squared length in a uniform direction. (torch
draws that length from Beta(k - 1/2, .), which for dim >= 3 makes the later
rows' correlations more spread out than the LKJ law; ember follows the paper,
and the test checks every off-diagonal correlation's variance is
1 / (2 concentration + dim - 1).) log_prob is torch's."""
import math

import ember

from . import constraints
from .dirichlet import Beta
from .distribution import Distribution, broadcast_all


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky
    _param_names = ("concentration",)

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)
        # onion method: row k (k >= 1) of the factor has squared off-diagonal length
        # y_k ~ Beta(k / 2, c + (dim - 2) / 2 - (k - 1) / 2) (row 0 has none; its Beta is a placeholder)
        c = self.concentration
        marginal = c + 0.5 * (dim - 2)
        k = ember.arange(dim, dtype=c.dtype, device=c.device)
        conc1 = ember.where(k == 0, ember.full_like(k, 0.5), 0.5 * k)
        conc0 = marginal.unsqueeze(-1) - 0.5 * (k - 1).clamp(min=0)
        self._beta = Beta(conc1, conc0, validate_args=False)

    def _constructor_kwargs(self):
        return {"dim": self.dim, "concentration": self.concentration}

    def _sample(self, sample_shape=()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u = ember.randn(*self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        norm = u.norm(dim=-1, keepdim=True)
        direction = u / ember.where(norm > 0, norm, ember.ones_like(norm))  # the first row is all zeros
        w = y.sqrt() * direction
        diag = (1 - (w * w).sum(-1)).clamp(min=ember.finfo(w.dtype).tiny).sqrt()
        return w + ember.diag_embed(diag)

    def log_prob(self, value):
        self._validate_sample(value)
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = ember.arange(2, self.dim + 1, dtype=value.dtype, device=value.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        # the normalizer of Lewandowski, Kurowicka and Joe (2009), through the multivariate log-gamma
        normalizer = 0.5 * dm1 * math.log(math.pi) + ember.mvlgamma(alpha - 0.5, dm1) - alpha.lgamma() * dm1
        return unnormalized - normalizer
