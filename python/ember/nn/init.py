"""ember.nn.init: in-place weight initialisers (as torch.nn.init), drawn from ember's generator."""
import math
import warnings

import numpy as np

import ember


def calculate_gain(nonlinearity, param=None):
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with ember.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with ember.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    with ember.no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with ember.no_grad():
        tensor.copy_(ember.eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype))
    return tensor


def dirac_(tensor, groups=1):
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    arr = np.zeros(tuple(sizes))
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            centre = tuple(s // 2 for s in sizes[2:])
            arr[(g * out_per_group + d, d) + centre] = 1
    with ember.no_grad():
        tensor.copy_(ember.tensor(arr, dtype=tensor.dtype))
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) restricted to [a, b], by inverting the normal CDF on a uniform draw."""
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    with ember.no_grad():
        # u in [2lo-1, 2hi-1] -> erfinv(u) * sqrt(2) is a standard normal restricted to the bounds.
        u = ember.empty(tuple(tensor.shape), dtype=ember.float64).uniform_(2 * lo - 1, 2 * hi - 1,
                                                                           generator=generator)
        z = _erfinv(u)
        tensor.copy_(ember.clamp(z * (std * math.sqrt(2.0)) + mean, a, b))
    return tensor


def _erfinv(y):
    """Inverse error function of a float64 tensor: Winitzki's closed-form start refined by Newton steps."""
    y = ember.clamp(y, -1 + 1e-15, 1 - 1e-15)
    k = 0.147
    ln = ember.log(1.0 - y * y)
    t = ln * 0.5 + 2.0 / (math.pi * k)
    x = ember.sign(y) * ember.sqrt(ember.sqrt(t * t - ln / k) - t)
    for _ in range(3):
        x = x - (ember.erf(x) - y) / (ember.exp(-x * x) * (2.0 / math.sqrt(math.pi)))
    return x


def orthogonal_(tensor, gain=1, generator=None):
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = ember.empty(rows, cols, dtype=ember.float64).normal_(0.0, 1.0, generator=generator).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique, so q is uniformly distributed
    if rows < cols:
        q = q.T
    with ember.no_grad():
        tensor.copy_(ember.tensor(q.reshape(tuple(tensor.shape)) * gain, dtype=tensor.dtype))
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with ember.no_grad():
        tensor.normal_(0, std, generator=generator)
        for c in range(cols):
            idx = ember.randperm(rows)[:num_zeros]
            for r in idx.tolist():
                tensor[r, c] = 0.0
    return tensor


# ---- the deprecated spellings without the trailing underscore, as torch keeps them (with its warning)

def _deprecated(new):
    import functools
    import warnings

    @functools.wraps(new)
    def old(*args, **kwargs):
        warnings.warn(f"`nn.init.{new.__name__[:-1]}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    old.__name__ = new.__name__[:-1]
    return old


uniform, normal, constant, eye, dirac, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal, \
    orthogonal, sparse = map(_deprecated, (uniform_, normal_, constant_, eye_, dirac_, xavier_uniform_,
                                           xavier_normal_, kaiming_uniform_, kaiming_normal_, orthogonal_, sparse_))
