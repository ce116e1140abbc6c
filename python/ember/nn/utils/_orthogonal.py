"""parametrizations.orthogonal (as torch's): module.<name> kept orthogonal
(orthonormal columns, or rows when it is wide) through one of three maps of
an unconstrained matrix X:
- "matrix_exp": Q = exp(A), A = tril(X) - tril(X)^T skew-symmetric;
- "cayley": Q = (I - A/2)^-1 (I + A/2);
- "householder": Q = the product of the Householder reflections whose vectors
  are the columns of X below the diagonal (with X's diagonal signs).
With use_trivialization (the default), assigning a matrix stores it as the
`base` buffer and the map's output multiplies it (so the map starts at the
identity). Real tensors only."""
import ember
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize

_MAPS = ("matrix_exp", "cayley", "householder")


def _eye_like(x, n, k):
    return ember.eye(n, k, dtype=x.dtype, device=x.device).expand(*x.shape[:-2], n, k)


def householder_product(V, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i column i of V below the diagonal with
    a 1 on it (LAPACK's orgqr), written with ember ops so that it is differentiable."""
    n, k = V.shape[-2], V.shape[-1]
    vectors = V.tril(-1) + _eye_like(V, n, k)
    Q = _eye_like(V, n, k)
    for i in reversed(range(k)):
        v = vectors[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.transpose(-2, -1) @ Q))
    return Q


def _householder_qr(Q):
    """(A, tau) as LAPACK's geqrf: R on and above A's diagonal, the reflectors' vectors below it."""
    A = Q.clone()
    k = A.shape[-1]
    taus = []
    for i in range(k):
        x = A[..., i:, i]
        alpha = x[..., 0]
        tail = x[..., 1:].pow(2).sum(-1)
        reflect = tail > 0
        sign = ember.where(alpha >= 0, ember.ones_like(alpha), -ember.ones_like(alpha))
        beta = -sign * (alpha * alpha + tail).sqrt()
        safe_beta = ember.where(reflect, beta, ember.ones_like(beta))
        tau = ember.where(reflect, (beta - alpha) / safe_beta, ember.zeros_like(beta))
        denom = ember.where(reflect, alpha - beta, ember.ones_like(beta))
        v = ember.cat([ember.ones_like(alpha).unsqueeze(-1), x[..., 1:] / denom.unsqueeze(-1)], -1)
        v = ember.where(reflect.unsqueeze(-1), v, ember.zeros_like(v))
        block = A[..., i:, i:]
        block = block - tau.unsqueeze(-1).unsqueeze(-1) * (v.unsqueeze(-1) @ (v.unsqueeze(-2) @ block))
        A[..., i:, i:] = block
        A[..., i + 1:, i] = ember.where(reflect.unsqueeze(-1), v[..., 1:], A[..., i + 1:, i])
        taus.append(tau)
    return A, ember.stack(taus, -1)


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * ember.finfo(Q.dtype).eps
    return bool(ember.allclose(Q.transpose(-2, -1) @ Q, _eye_like(Q, k, k), atol=eps))


def _make_orthogonal(A):
    """The Q of A's QR decomposition, with R's diagonal made positive (so the result is unique)."""
    Q, R = ember.linalg.qr(A)
    signs = R.diagonal(dim1=-2, dim2=-1).sign()
    signs = ember.where(signs == 0, ember.ones_like(signs), signs)
    return Q * signs.unsqueeze(-2)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex():
            raise NotImplementedError("orthogonal: complex tensors are not supported by ember")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = ember.cat([X, X.new_zeros(*X.shape[:-2], n, n - k)], -1)
            A = X - X.transpose(-2, -1)
            if self.orthogonal_map == "matrix_exp":
                Q = ember.linalg.matrix_exp(A)
            else:
                eye = _eye_like(A, n, n)
                Q = ember.linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = householder_product(A, tau)
            # the diagonal's signs pick each reflection or its negative (right_inverse stores them as +-1)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().to(Q.dtype).unsqueeze(-2)
        if getattr(self, "base", None) is not None:
            Q = self.base @ Q
        if transposed:
            Q = Q.transpose(-2, -1)
        return Q

    def right_inverse(self, Q):
        with ember.no_grad():
            if tuple(Q.shape) != tuple(self.shape):
                raise ValueError(f"Expected a matrix or batch of matrices of shape {tuple(self.shape)}. "
                                 f"Got a tensor of shape {tuple(Q.shape)}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.transpose(-2, -1)
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                A, tau = _householder_qr(Q)
                diag = A.diagonal(dim1=-2, dim2=-1)
                signs = ember.where(diag >= 0, ember.ones_like(diag), -ember.ones_like(diag))
                signs = ember.where(tau == 0, -signs, signs)  # no reflection: forward's tau = 2 flips that column
                A = A.tril(-1) + A.triu(1) + _eye_like(A, n, k) * signs.unsqueeze(-2)  # R above, as geqrf leaves it
                return A.transpose(-2, -1) if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # complete Q to a square orthogonal matrix
                N = ember.randn(*Q.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(ember.cat([Q, N], -1))
            self.base = Q
            # -I: every map sends it to the identity (householder: reflections undone by the -1 diagonal)
            neg_id = ember.zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keeps module.<name> (a matrix or batch of matrices) orthogonal; orthogonal_map: "matrix_exp",
    "cayley" or "householder" (default: matrix_exp for square matrices, householder otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.dim()} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrize.register_parametrization(module, name,
                                         _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization),
                                         unsafe=True)
    return module
