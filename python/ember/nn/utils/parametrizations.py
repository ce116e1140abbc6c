"""ember.nn.utils.parametrizations (as torch.nn.utils.parametrizations): weight_norm and spectral_norm
registered through ember.nn.utils.parametrize."""
import ember
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.utils import parametrize

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


def _norm_except_dim(v, dim):
    """The 2-norm of v over every dimension but `dim`, shaped to broadcast against v; dim -1: the norm of
    all of v (torch's convention)."""
    if dim == -1:
        return ember.norm(v)
    dims = [d for d in range(v.dim()) if d != dim]
    return ember.sqrt((v * v).sum(dims, keepdim=True)) if dims else v.abs()


def _weight_norm(v, g, dim):
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self._dim(weight_v))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self._dim(weight)), weight

    def _dim(self, v):
        return self.dim + v.dim() if self.dim < -1 else self.dim


def weight_norm(module, name="weight", dim=0):
    """Reparametrizes module.<name> as g * v / ||v|| (the norm over every dimension but `dim`; dim=None:
    over all of it), g and v stored as parametrizations.<name>.original0 and original1."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """W / sigma(W), sigma the largest singular value of W viewed as a matrix with `dim` first, estimated by
    power iteration on the buffers _u, _v (updated in training mode only)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"spectral_norm: Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        self.n_power_iterations = n_power_iterations
        if ndim > 1:
            matrix = self._reshape_weight_to_matrix(weight)
            h, w = matrix.shape
            u = ember.randn(h, dtype=weight.dtype, device=weight.device)
            v = ember.randn(w, dtype=weight.dtype, device=weight.device)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def _power_method(self, matrix, iterations):
        with ember.no_grad():
            for _ in range(iterations):
                self._u.copy_(F.normalize(ember.matmul(matrix, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(ember.matmul(matrix.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(matrix.detach(), self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # the next in-place update must not touch the graph's copies
        sigma = (u * ember.matmul(matrix, v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divides module.<name> by its spectral norm each time it is read (one power iteration per read in
    training mode). dim defaults to 1 for ConvTranspose modules, 0 otherwise."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if "ConvTranspose" in type(module).__name__ else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


from ember.nn.utils._orthogonal import orthogonal  # noqa: E402,F401
