"""InstanceNorm1d/2d/3d and LocalResponseNorm."""
import ember
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import _NormBase


class _InstanceNorm(_NormBase):
    _spatial = 1

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        n = self._spatial
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"{type(self).__name__}: expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        batched = input.dim() == n + 2
        x = input if batched else input.unsqueeze(0)
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"{type(self).__name__}: expected input's size at dim=1 to match num_features "
                             f"({self.num_features}), but got: {x.shape[1]}.")
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                              self.momentum if self.momentum is not None else 0.1, self.eps)
        return out if batched else out.squeeze(0)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    _spatial = 3


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

