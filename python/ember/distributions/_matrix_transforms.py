"""Transforms onto matrix constraints (as torch's): CorrCholeskyTransform
(unconstrained vectors to Cholesky factors of correlation matrices) and
PositiveDefiniteTransform; with vec_to_tril_matrix / tril_matrix_to_vec,
written as products with a 0/1 placement matrix so they stay differentiable."""
import math

import ember
import ember.nn.functional as F

from . import constraints
from .transforms import LowerCholeskyTransform, Transform


def _placement(n, diag, like):
    """[m, n*n] 0/1 matrix putting a vector of the m entries of the (diag-offset) lower triangle, in
    row-major order, at their places in a flattened n x n matrix."""
    rows, cols = ember.tril_indices(n, n, diag, device=like.device).unbind(0)
    m = rows.shape[0]
    place = ember.zeros(m, n * n, dtype=like.dtype, device=like.device)
    place[ember.arange(m, device=like.device), rows * n + cols] = 1
    return place


def vec_to_tril_matrix(vec, diag=0):
    """The lower triangle (below diagonal offset diag) of a square matrix filled row by row from vec."""
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if abs(round(n) - n) > 1e-9:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as the lower triangular "
                         "part of a square D x D matrix.")
    n = round(n)
    return (vec @ _placement(n, diag, vec)).reshape(*vec.shape[:-1], n, n)


def tril_matrix_to_vec(mat, diag=0):
    n = mat.shape[-1]
    return mat.reshape(*mat.shape[:-2], n * n) @ _placement(n, diag, mat).transpose(0, 1)


class CorrCholeskyTransform(Transform):
    """R^(D(D-1)/2) to lower Cholesky factors of D x D correlation matrices: tanh maps each entry into
    (-1, 1), and each row takes those fractions of the unit norm still left (stick breaking per row)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CorrCholeskyTransform(cache_size)

    def _call(self, x):
        eps = ember.finfo(x.dtype).eps
        x = x.tanh().clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # row i of the factor: r_ij * sqrt(1 - sum_{k<j} y_ik^2), built as a cumulative product
        remaining = (1 - r * r).sqrt().cumprod(-1)
        n = r.shape[-1]
        r = r + ember.eye(n, dtype=r.dtype, device=r.device)
        return r * F.pad(remaining[..., :-1], (1, 0), value=1.0)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        left_shifted = F.pad(left[..., :-1], (1, 0), value=1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_shifted, diag=-1).sqrt()
        return 0.5 * (t.log1p() - (-t).log1p())

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        left = 1 - (y * y).cumsum(-1)
        stick_breaking = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        m = shape[-1]
        n = round((0.25 + 2 * m) ** 0.5 + 0.5)
        if n * (n - 1) // 2 != m:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (n, n)

    def inverse_shape(self, shape):
        if len(shape) < 2 or shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        n = shape[-1]
        return tuple(shape[:-2]) + (n * (n - 1) // 2,)


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices to positive definite ones: L L^T with L from LowerCholeskyTransform."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PositiveDefiniteTransform(cache_size)

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.transpose(-2, -1)

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(ember.linalg.cholesky(y))
