"""More torch.nn.functional pooling, composed of ember ops (every device, autograd): lp_pool1d / lp_pool2d,
max_unpool1d / max_unpool2d, the *_with_indices spellings, pdist, and the in-place activation spellings
elu_, hardtanh_, leaky_relu_. Re-exported by ember.nn.functional."""
import numpy as np

import ember
from ember import _C

__all__ = ["lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d", "max_pool1d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "pdist", "elu_", "hardtanh_",
           "leaky_relu_"]


def _tuple(v, n):
    return tuple(int(x) for x in v) if isinstance(v, (tuple, list)) else (int(v),) * n


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p), as the window average of x^p times the window size."""
    k = _tuple(kernel_size, 1)[0]
    out = _C._nn.avg_pool1d(input.pow(norm_type), k, stride if stride is not None else k, 0, ceil_mode)
    return (ember.sign(out) * ember.relu(out.abs())).mul(k).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kh, kw = _tuple(kernel_size, 2)
    out = _C._nn.avg_pool2d(input.pow(norm_type), (kh, kw), stride if stride is not None else (kh, kw), 0, ceil_mode)
    return (ember.sign(out) * ember.relu(out.abs())).mul(kh * kw).pow(1.0 / norm_type)


def _unpool(input, indices, spatial, kernel_size, stride, padding, output_size, name):
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"{name}: Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: expected a {spatial + 1}D or {spatial + 2}D input, got {input.dim()}D")
    kernel = _tuple(kernel_size, spatial)
    stride = _tuple(stride, spatial) if stride is not None else kernel
    padding = _tuple(padding, spatial)
    in_sizes = list(input.shape[-spatial:])
    if output_size is None:
        out_sizes = [(n - 1) * s - 2 * p + k for n, s, p, k in zip(in_sizes, stride, padding, kernel)]
    else:
        out_sizes = [int(v) for v in output_size][-spatial:]
        if len(out_sizes) != spatial:
            raise ValueError(f"{name}: output_size must have {spatial} or {spatial + 2} elements, got {output_size}")
    lead = list(input.shape[:-spatial])
    plane = int(np.prod(out_sizes))
    flat_idx = indices.reshape(*lead, -1)
    if flat_idx.numel() and (bool((flat_idx < 0).any()) or bool((flat_idx >= plane).any())):
        raise RuntimeError(f"{name}: Found an invalid max index (output volume is {plane} elements)")
    out = ember.zeros(*lead, plane, dtype=input.dtype, device=input.device)
    out = out.scatter(len(lead), flat_idx, input.reshape(*lead, -1))
    return out.reshape(*lead, *out_sizes)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Puts each value of input at its max_pool1d index in a zero tensor of the unpooled size."""
    return _unpool(input, indices, 1, kernel_size, stride, padding, output_size, "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _unpool(input, indices, 2, kernel_size, stride, padding, output_size, "max_unpool2d")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _C._nn.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return _C._nn.adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return _C._nn.adaptive_max_pool2d(input, output_size, True)


def pdist(input, p=2):
    """The p-norm distances between the rows of an [N, M] input, for each pair i < j in row-major order:
    N (N - 1) / 2 values."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    rows_i = input.index_select(0, ember.tensor(i.astype(np.int64), device=input.device))
    rows_j = input.index_select(0, ember.tensor(j.astype(np.int64), device=input.device))
    return ember.norm(rows_i - rows_j, p, 1) if len(i) else ember.zeros(0, dtype=input.dtype, device=input.device)


def elu_(input, alpha=1.0):
    return ember.nn.functional.elu(input, alpha, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return ember.nn.functional.hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return ember.nn.functional.leaky_relu(input, negative_slope, inplace=True)
