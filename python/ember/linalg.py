"""ember.linalg: torch.linalg's functions.

Factorizations and solvers are C++ (ember._C._linalg: LAPACK on the CPU,
cuSOLVER on CUDA); cross is a C++ composite (core/ops/composite_pointwise.h).
The norms, matrix_exp, lstsq, solve_ex, matrix_rank, cond, multi_dot and
vecdot are compositions of ember ops here, so they run and differentiate on
every device the ops do.
"""
import collections
import math
from fractions import Fraction

import ember
from ember._C._linalg import (  # noqa: F401
    cholesky, cholesky_ex, cross, det, eigh, eigvalsh, inv, inv_ex, lu, lu_factor, lu_factor_ex, lu_solve, matrix_power,
    pinv, qr, slogdet, solve, solve_triangular, svd, svdvals,
)

__all__ = [
    "cholesky", "cholesky_ex", "cond", "cross", "det", "eigh", "eigvalsh", "inv", "inv_ex", "lstsq", "lu",
    "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
    "vecdot", "vector_norm",
]

matmul = ember.matmul

def _check_floating(op, x):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point tensor as input. Got {x.dtype}")


def _cast(x, dtype):
    return x if dtype is None else x.to(dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """sum(|x|^ord)^(1/ord) over `dim` (all elements when None); ord may be
    inf, -inf or 0 (the number of nonzeros)."""
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"linalg.vector_norm: expected a Tensor, got {type(x).__name__}")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got '{ord}'")
    if x.is_complex():  # the norm of the magnitudes, as torch
        x = _cast(x, dtype).abs() if dtype is None or dtype.is_complex else x.abs().to(dtype)
        return ember.norm(x, float(ord), dim, keepdim)
    _check_floating("linalg.vector_norm", x)
    return ember.norm(_cast(x, dtype), float(ord), dim, keepdim)


def _matrix_dims(op, A, dim):
    if A.dim() < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions, got shape {list(A.shape)}")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {dim}")
    d0, d1 = (int(d) for d in dim)
    nd = A.dim()
    for d in (d0, d1):
        if not -nd <= d < nd:
            raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {d})")
    d0, d1 = d0 % nd, d1 % nd
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def _squeeze_dims(t, dims):
    for d in sorted(dims, reverse=True):
        t = t.squeeze(d)
    return t


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Matrix norms over the two dims `dim`: 'fro', 'nuc', inf, -inf, 1, -1,
    2, -2 (the last two and 'nuc' through the singular values)."""
    op = "linalg.matrix_norm"
    if not isinstance(A, ember.Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(A).__name__}")
    _check_floating(op, A)
    d0, d1 = _matrix_dims(op, A, dim)
    A = _cast(A, dtype)
    if ord == "fro":
        return ember.norm(A, 2.0, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        moved = A.permute(*[d for d in range(A.dim()) if d not in (d0, d1)], d0, d1)
        s = svdvals(moved)
        if ord == "nuc":
            out = s.sum(-1)
        elif ord == 2:
            out = s.amax(-1)
        else:
            out = s.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                out = out.unsqueeze(d)
        return out
    if isinstance(ord, str) or ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    # 1 / -1: the largest / smallest column sum; inf / -inf: the same over rows.
    summed, reduced = (d0, d1) if ord in (1, -1) else (d1, d0)
    sums = A.abs().sum(summed, keepdim=True)
    out = sums.amax(reduced, keepdim=True) if ord > 0 else sums.amin(reduced, keepdim=True)
    return out if keepdim else _squeeze_dims(out, (d0, d1))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm (dim an int, or A 1-D) or a matrix norm (dim a pair, or
    A 2-D with ord given); with neither ord nor dim, the 2-norm of all
    elements."""
    op = "linalg.norm"
    if not isinstance(A, ember.Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(A).__name__}")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is not None and len(dim) == 1:
        if isinstance(ord, str):
            raise RuntimeError(f"{op}: ord={ord!r} is a matrix norm; with one dim, ord must be a number")
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is not None:
        raise RuntimeError(f"{op}: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if A.dim() == 1:
        if isinstance(ord, str):
            raise RuntimeError(f"{op}: ord={ord!r} is a matrix norm, but the input is 1-D")
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"{op}: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D.")


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values (eigenvalue magnitudes when hermitian)
    above max(atol, rtol * the largest); tolerances default as in pinv."""
    _check_floating("linalg.matrix_rank", A)
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_rank: The input tensor A must have at least 2 dimensions, got shape "
                           f"{list(A.shape)}")
    with ember.no_grad():
        s = eigvalsh(A).abs() if hermitian else svdvals(A)
    m, n = A.shape[-2], A.shape[-1]
    if rtol is None:
        eps = 1.1920928955078125e-07 if A.dtype == ember.float32 else 2.220446049250313e-16
        rtol = 0.0 if (atol is not None and atol > 0) else eps * max(m, n)
    atol = 0.0 if atol is None else atol
    if s.shape[-1] == 0:
        return ember.zeros(tuple(s.shape[:-1]), dtype=ember.int64, device=A.device)
    tol = ember.maximum(s.amax(-1, keepdim=True) * rtol, ember.full_like(s[..., :1], atol))
    return (s > tol).sum(-1)


def cond(A, p=None):
    """The condition number: ||A|| ||A^-1|| in the norm p (None or 2: the
    ratio of the extreme singular values)."""
    _check_floating("linalg.cond", A)
    if p is None or p in (2, -2):
        s = svdvals(A)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def vecdot(x, y, *, dim=-1):
    """The dot product of vectors along `dim` (real tensors: sum(x * y, dim)), broadcasting."""
    return (x * y).sum(dim)


def multi_dot(tensors):
    """The product of a chain of matrices (the first and last may be vectors),
    in the cheapest order."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"linalg.multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    mats = [t.unsqueeze(0) if i == 0 and first_vec else t.unsqueeze(-1) if i == len(tensors) - 1 and last_vec else t
            for i, t in enumerate(tensors)]
    for i, t in enumerate(mats):
        if t.dim() != 2:
            raise RuntimeError(f"linalg.multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    dims = [mats[0].shape[0]] + [t.shape[1] for t in mats]
    n = len(mats)
    # cost[i][j]: fewest multiplications for mats[i..j]; split[i][j]: where to split
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return product(i, k) @ product(k + 1, j)

    out = product(0, n - 1)
    if first_vec:
        out = out.squeeze(0)
    if last_vec:
        out = out.squeeze(-1)
    return out


_SolveEx = collections.namedtuple("linalg_solve_ex", ["result", "info"])
_SolveEx.__module__ = "ember.return_types"
_Lstsq = collections.namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
_Lstsq.__module__ = "ember.return_types"


def solve_ex(A, B, *, left=True, check_errors=False):
    """solve without the singularity check: (result, info), info > 0 where A
    is singular (the result then holds inf/nan)."""
    if not isinstance(A, ember.Tensor) or not isinstance(B, ember.Tensor):
        raise TypeError("linalg.solve_ex: expected tensors A and B")
    vector = left and (B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1])))
    LU, pivots, info = lu_factor_ex(A, check_errors=check_errors)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.solve_ex: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    result = lu_solve(LU, pivots, B.unsqueeze(-1) if vector else B, left=left)
    return _SolveEx(result.squeeze(-1) if vector else result, info)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of A X = B through the SVD (minimum norm,
    rank-revealing, as the gelsd driver): singular values at most rcond times
    the largest count as zero (default: eps * max(m, n)). rank is returned for
    the gelsy (the CPU default), gelsd and gelss drivers, the singular values
    for gelsd and gelss; residuals (squared, per column of B) when m > n and
    every matrix has full rank, for drivers other than gelsy, as PyTorch."""
    op = "linalg.lstsq"
    _check_floating(op, A)
    if A.dim() < 2 or B.dim() < 1:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions, got shapes {list(A.shape)} and "
                           f"{list(B.shape)}")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got {A.dtype} and {B.dtype}")
    on_cuda = A.device.type == "cuda"
    drivers = ("gels",) if on_cuda else ("gels", "gelsy", "gelsd", "gelss")
    if driver is None:
        driver = "gels" if on_cuda else "gelsy"
    if driver not in drivers:
        raise RuntimeError(f"{op}: parameter `driver` should be one of {drivers}, got '{driver}'")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if Bm.shape[-2] != m:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2), got {m} and {Bm.shape[-2]}")
    U, S, Vh = svd(A, full_matrices=False)
    eps = 1.1920928955078125e-07 if A.dtype == ember.float32 else 2.220446049250313e-16
    tol_ratio = eps * max(m, n) if rcond is None or rcond < 0 else rcond
    if S.shape[-1] > 0:
        keep = S > S.amax(-1, keepdim=True) * tol_ratio
    else:
        keep = S > 0
    inv_s = ember.where(keep, 1.0 / ember.where(keep, S, ember.ones_like(S)), ember.zeros_like(S))
    solution = Vh.transpose(-2, -1) @ (inv_s.unsqueeze(-1) * (U.transpose(-2, -1) @ Bm))
    rank = keep.sum(-1)
    empty = ember.empty(0, dtype=A.dtype, device=A.device)
    residuals = empty
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        residuals = ((A @ solution - Bm) ** 2).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    return _Lstsq(solution.squeeze(-1) if vector else solution, residuals,
                  rank if driver != "gels" else ember.empty(0, dtype=ember.int64, device=A.device),
                  S if driver in ("gelsd", "gelss") else empty)


def _pade13():
    # The [13/13] Pade approximant of exp: b_j = (26 - j)! 13! / (26! j! (13 - j)!), scaled so b_13 = 1.
    m = 13
    c = [Fraction(math.factorial(2 * m - j) * math.factorial(m),
                  math.factorial(2 * m) * math.factorial(j) * math.factorial(m - j)) for j in range(m + 1)]
    return [float(x / c[-1]) for x in c]


_PADE13 = _pade13()
_THETA13 = 5.371920351148152  # the largest 1-norm for which degree 13 is accurate in float64 (Higham 2005)


def matrix_exp(A):
    """exp(A) by scaling and squaring with the [13/13] Pade approximant
    (Higham, "The scaling and squaring method for the matrix exponential
    revisited", 2005): A / 2^s has 1-norm at most theta_13, its approximant
    is squared s times. One s for the whole batch (its largest norm). Built
    from ember ops (matmul, solve), so it is differentiable on every device."""
    op = "linalg.matrix_exp"
    if not isinstance(A, ember.Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(A).__name__}")
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: expected a tensor of square matrices, got shape {list(A.shape)}")
    _check_floating(op, A)
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    with ember.no_grad():
        norm1 = float(A.abs().sum(-2).amax().item())
    s = max(0, int(math.ceil(math.log2(norm1 / _THETA13)))) if norm1 > _THETA13 else 0
    X = A / (2.0 ** s) if s > 0 else A
    b = _PADE13
    eye = ember.eye(n, dtype=A.dtype, device=A.device)
    X2 = X @ X
    X4 = X2 @ X2
    X6 = X4 @ X2
    U = X @ (X6 @ (b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)
    V = X6 @ (b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye
    E = solve(V - U, V + U)
    for _ in range(s):
        E = E @ E
    return E


# ---- LinAlgError: the numerical failures (singular, not positive-definite, no convergence) as torch's
# subclass of RuntimeError, so `except ember.linalg.LinAlgError` and `except RuntimeError` both catch them.

class LinAlgError(RuntimeError):
    """A linear-algebra routine could not finish on this input (torch.linalg.LinAlgError)."""


_NUMERICAL_FAILURES = ("singular", "not positive-definite", "converge")


def _raising_linalg_error(fn):
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except LinAlgError:
            raise
        except RuntimeError as e:
            if any(phrase in str(e) for phrase in _NUMERICAL_FAILURES):
                raise LinAlgError(str(e)) from None
            raise
    return wrapper


cholesky, inv, solve, eigh, eigvalsh, svd, svdvals, matrix_power, lu_factor, pinv = map(
    _raising_linalg_error, (cholesky, inv, solve, eigh, eigvalsh, svd, svdvals, matrix_power, lu_factor, pinv))


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of A's matrices (a view), as torch.linalg.diagonal."""
    return ember.diagonal(A, offset, dim1, dim2)


def vander(x, *, N=None):
    """[..., n, N] with columns x^0, x^1, ..., x^(N-1) (increasing powers, torch.linalg.vander)."""
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else int(N)
    if N is not None and n <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {N}")
    powers = ember.arange(n, device=x.device)
    base = x if x.dtype.is_floating_point else x.to(ember.int64)
    return base.unsqueeze(-1) ** powers.to(base.dtype)


def tensorinv(A, ind=2):
    """The inverse of A read as a linear map from its first `ind` dims to the rest (torch.linalg.tensorinv)."""
    if ind <= 0:
        raise RuntimeError(f"linalg.tensorinv: Expected a strictly positive integer for 'ind', but got {ind}")
    out_shape, in_shape = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(out_shape), math.prod(in_shape)
    if rows != cols:
        raise RuntimeError(f"linalg.tensorinv: Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(*in_shape, *out_shape)


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) == B (torch.linalg.tensorsolve); `dims` moves those dims of A last."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        order = [d for d in range(A.dim()) if d not in dims] + dims
        A = A.permute(*order)
    rows = B.numel()
    x_shape = tuple(A.shape[B.dim():])
    cols = math.prod(x_shape)
    if rows != cols:
        raise RuntimeError(f"linalg.tensorsolve: Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(x_shape)


__all__ += ["LinAlgError", "diagonal", "vander", "tensorinv", "tensorsolve"]
