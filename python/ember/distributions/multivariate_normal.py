"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril):
everything goes through the lower Cholesky factor L (cov = L L^T), got with
ember.linalg.cholesky."""
import math

import ember

from . import constraints
from .distribution import Distribution


def _batch_mahalanobis(L, diff):
    """|| L^-1 diff ||^2 over the last dim, L broadcast against diff's batch dims."""
    batch = ember.broadcast_shapes(tuple(L.shape[:-2]), tuple(diff.shape[:-1]))
    k = diff.shape[-1]
    solved = ember.linalg.solve_triangular(L.expand(*batch, k, k), diff.expand(*batch, k).unsqueeze(-1),
                                           upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _param_names = ("loc",)

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = given[0]
        name = ("covariance_matrix" if covariance_matrix is not None else
                "precision_matrix" if precision_matrix is not None else "scale_tril")
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        batch = ember.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        k = loc.shape[-1]
        self.loc = loc.expand(*batch, k)
        setattr(self, name, matrix.expand(*batch, k, k))
        self._given = name
        self._derived = tuple(n for n in ("covariance_matrix", "precision_matrix", "scale_tril") if n != name)
        super().__init__(batch, (k,), validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = scale_tril
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(ember.linalg.inv(precision_matrix))
        # the two matrices not given, as attributes computed on first use
        for n in self._derived:
            self.__dict__.pop(n, None)

    def __getattr__(self, name):
        # covariance_matrix / precision_matrix / scale_tril when not the one given
        if name.startswith("_") or "_unbroadcasted_scale_tril" not in self.__dict__:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if name == "scale_tril":
            L = self.__dict__["_unbroadcasted_scale_tril"]
            return L.expand(*self.batch_shape, *L.shape[-2:])
        if name == "covariance_matrix":
            L = self.__dict__["_unbroadcasted_scale_tril"]
            cov = L @ L.transpose(-2, -1)
            return cov.expand(*self.batch_shape, *cov.shape[-2:])
        if name == "precision_matrix":
            L = self.__dict__["_unbroadcasted_scale_tril"]
            eye = ember.eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(L.shape)
            L_inv = ember.linalg.solve_triangular(L, eye, upper=False)
            prec = L_inv.transpose(-2, -1) @ L_inv
            return prec.expand(*self.batch_shape, *prec.shape[-2:])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _constructor_kwargs(self):
        return {"loc": self.loc, self._given: getattr(self, self._given)}

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        L = self._unbroadcasted_scale_tril
        return L.pow(2).sum(-1).expand(*self.batch_shape, *self.event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = ember.randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        k = self.event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        k = self.event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(*self.batch_shape) if len(self.batch_shape) else h

    def __repr__(self):
        return f"MultivariateNormal(loc: {tuple(self.loc.shape)}, {self._given}: {tuple(self.loc.shape) + self.event_shape[-1:]})"
