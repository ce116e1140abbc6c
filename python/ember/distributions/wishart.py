"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): the law of
X^T X for df rows X ~ N(0, covariance), sampled by Bartlett's decomposition
(chi-square diagonal, normal lower triangle), reparameterized through Chi2."""
import math

import ember

from . import constraints
from .distribution import Distribution
from .gamma import Chi2

_LOG_2 = math.log(2.0)


def _mvdigamma(x, p):
    return (x.unsqueeze(-1) - ember.arange(p, dtype=x.dtype, device=x.device) / 2).digamma().sum(-1)


class Wishart(Distribution):
    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _param_names = ("df",)

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = given[0]
        name = ("covariance_matrix" if covariance_matrix is not None else
                "precision_matrix" if precision_matrix is not None else "scale_tril")
        if matrix.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        p = matrix.shape[-1]
        if not isinstance(df, ember.Tensor):
            df = ember.tensor(float(df), dtype=matrix.dtype, device=matrix.device)
        batch = ember.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(df.shape))
        self.df = df.expand(*batch)
        setattr(self, name, matrix.expand(*batch, p, p))
        self._given = name
        self._derived = tuple(n for n in ("covariance_matrix", "precision_matrix", "scale_tril") if n != name)
        super().__init__(batch, (p, p), validate_args)
        if self._validate_args and not bool((self.df > p - 1).all()):
            raise ValueError(f"Expected parameter df (Tensor of shape {tuple(self.df.shape)}) of distribution "
                             f"{self!r} to satisfy the constraint GreaterThan(lower_bound={p - 1}), but found "
                             f"invalid values:\n{self.df}")
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = scale_tril
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = ember.linalg.cholesky(ember.linalg.inv(precision_matrix))
        # Bartlett: the squared diagonal of the triangular factor, Chi2(df - i) for row i
        self._chi2 = Chi2(self.df.unsqueeze(-1) - ember.arange(p, dtype=self.df.dtype, device=self.df.device),
                          validate_args=False)

    def __getattr__(self, name):
        if name.startswith("_") or "_unbroadcasted_scale_tril" not in self.__dict__:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        L = self.__dict__["_unbroadcasted_scale_tril"]
        shape = tuple(self.batch_shape) + tuple(self.event_shape)
        if name == "scale_tril":
            return L.expand(*shape)
        if name == "covariance_matrix":
            return (L @ L.transpose(-2, -1)).expand(*shape)
        if name == "precision_matrix":
            eye = ember.eye(L.shape[-1], dtype=L.dtype, device=L.device).expand(L.shape)
            L_inv = ember.linalg.solve_triangular(L, eye, upper=False)
            return (L_inv.transpose(-2, -1) @ L_inv).expand(*shape)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _constructor_kwargs(self):
        return {"df": self.df, self._given: getattr(self, self._given)}

    def __repr__(self):
        return f"Wishart(df: {tuple(self.df.shape)}, {self._given}: {tuple(self.batch_shape) + tuple(self.event_shape)})"

    @property
    def mean(self):
        return self.df.reshape(*self.df.shape, 1, 1) * self.covariance_matrix

    @property
    def mode(self):
        p = self.event_shape[-1]
        factor = self.df - p - 1
        factor = ember.where(factor <= 0, ember.full_like(factor, math.nan), factor)
        return factor.reshape(*factor.shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag = V.diagonal(dim1=-2, dim2=-1)
        return self.df.reshape(*self.df.shape, 1, 1) * (V.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def rsample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        p = self.event_shape[-1]
        tiny = ember.finfo(self.df.dtype).tiny
        diag = self._chi2.rsample(sample_shape).clamp(min=tiny).sqrt()
        shape = sample_shape + tuple(self.batch_shape) + (p, p)
        lower = ember.randn(*shape, dtype=self.df.dtype, device=self.df.device).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (lower + ember.diag_embed(diag))
        return chol @ chol.transpose(-2, -1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        self._validate_sample(value)
        nu = self.df
        p = self.event_shape[-1]
        L = self._unbroadcasted_scale_tril
        batch = ember.broadcast_shapes(tuple(value.shape[:-2]), tuple(L.shape[:-2]))
        trace = ember.cholesky_solve(value.expand(*batch, p, p), L.expand(*batch, p, p)).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + self._half_log_det()) - ember.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * ember.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self.event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._half_log_det()) + ember.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)
