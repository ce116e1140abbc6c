"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): covariance
W W^T + diag(D) with W = cov_factor of rank r; densities through the
Woodbury identity and the r x r capacitance matrix I + W^T D^-1 W, so the
cost grows with r, not with the event size."""
import math

import ember

from . import constraints
from .distribution import Distribution


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _param_names = ("loc", "cov_factor", "cov_diag")

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        k = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2] != k:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {k} x m")
        if cov_diag.shape[-1:] != loc.shape[-1:]:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {tuple(loc.shape[-1:])}")
        batch = ember.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]), tuple(cov_diag.shape[:-1]))
        r = cov_factor.shape[-1]
        self.loc = loc.expand(*batch, k)
        self.cov_factor = cov_factor.expand(*batch, k, r)
        self.cov_diag = cov_diag.expand(*batch, k)
        super().__init__(batch, (k,), validate_args)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        # capacitance: I + W^T D^-1 W, r x r
        Wt_Dinv = (cov_factor / cov_diag.unsqueeze(-1)).transpose(-2, -1)
        eye = ember.eye(r, dtype=loc.dtype, device=loc.device)
        self._capacitance_tril = ember.linalg.cholesky(eye + Wt_Dinv @ cov_factor)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(*self.batch_shape, *self.event_shape)

    @property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        cov = W @ W.transpose(-2, -1) + ember.diag_embed(D)
        return cov.expand(*self.batch_shape, *self.event_shape, *self.event_shape)

    @property
    def scale_tril(self):
        return ember.linalg.cholesky(self.covariance_matrix)

    @property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1, C = L L^T the capacitance
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = (W / D.unsqueeze(-1)).transpose(-2, -1)
        A = ember.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        prec = ember.diag_embed(D.reciprocal()) - A.transpose(-2, -1) @ A
        return prec.expand(*self.batch_shape, *self.event_shape, *self.event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        r = self.cov_factor.shape[-1]
        eps_w = ember.randn(*shape[:-1], r, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = ember.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + (self._unbroadcasted_cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self):
        return (2 * self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                + self._unbroadcasted_cov_diag.log().sum(-1))

    def log_prob(self, value):
        self._validate_sample(value)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        diff = value - self.loc
        batch = tuple(diff.shape[:-1])
        Wt_Dinv_diff = ((W / D.unsqueeze(-1)).transpose(-2, -1) @ diff.unsqueeze(-1))  # [..., r, 1]
        L = self._capacitance_tril
        L = L.expand(*ember.broadcast_shapes(batch, tuple(L.shape[:-2])), *L.shape[-2:])
        Wt_Dinv_diff = Wt_Dinv_diff.expand(*L.shape[:-2], *Wt_Dinv_diff.shape[-2:])
        solved = ember.linalg.solve_triangular(L, Wt_Dinv_diff, upper=False).squeeze(-1)
        m = (diff.pow(2) / D).sum(-1) - solved.pow(2).sum(-1)
        k = self.event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + self._log_det() + m)

    def entropy(self):
        k = self.event_shape[0]
        h = 0.5 * (k * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(*self.batch_shape) if len(self.batch_shape) else h
