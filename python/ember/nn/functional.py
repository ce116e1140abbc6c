"""ember.nn.functional: the kernels bound in ember._C._nn plus Python compositions (as torch.nn.functional)."""
import math

import ember
from ember import _C
from ember._C._nn import *  # noqa: F401,F403  (conv2d, cross_entropy, gelu, ... as the families bind them)
from ember.nn._inplace import maybe_inplace

_nn = _C._nn


def _have(name):
    return hasattr(_nn, name)


# ---- activations ------------------------------------------------------------------------------

def relu(input, inplace=False):
    return ember.relu_(input) if inplace else ember.relu(input)


def relu_(input):
    return ember.relu_(input)


def silu(input, inplace=False):
    return _nn.silu_(input) if inplace else _nn.silu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return maybe_inplace(input, lambda x: ember.where(x > 0, x, x * negative_slope), inplace)


def elu(input, alpha=1.0, inplace=False):
    # expm1 of min(x, 0) keeps the unused branch finite for large x.
    return maybe_inplace(input, lambda x: ember.where(x > 0, x, ember.expm1(ember.clamp(x, max=0.0)) * alpha),
                         inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val cannot be greater than max_val (got {min_val} > {max_val})")
    return input.clamp_(min_val, max_val) if inplace else ember.clamp(input, min_val, max_val)


def hardsigmoid(input, inplace=False):
    return maybe_inplace(input, lambda x: ember.clamp(x / 6.0 + 0.5, 0.0, 1.0), inplace)


def hardswish(input, inplace=False):
    return maybe_inplace(input, lambda x: x * ember.clamp(x / 6.0 + 0.5, 0.0, 1.0), inplace)


def logsigmoid(input):
    return -softplus(-input)


def softsign(input):
    return input / (input.abs() + 1)


def mish(input, inplace=False):
    return maybe_inplace(input, lambda x: x * ember.tanh(softplus(x)), inplace)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    # Each norm is clamped separately, as torch does.
    n1 = ember.clamp(ember.norm(x1, 2, dim), min=eps)
    n2 = ember.clamp(ember.norm(x2, 2, dim), min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


def tanh(input):
    return ember.tanh(input)


def sigmoid(input):
    return ember.sigmoid(input)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return ember.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = 0 if input.dim() in (0, 1, 3) else 1
    return ember.log_softmax(input, dim, dtype=dtype)


# ---- linear -----------------------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input @ weight.T + bias; with a bias, one addmm for any shape, so autocast
    sees linear as one op (torch's dtype rules) and keeps a single node."""
    for name, value in (("input", input), ("weight", weight), ("bias", bias)):
        if not isinstance(value, ember.Tensor) and not (name == "bias" and value is None):
            raise TypeError(f"linear: {name} must be a Tensor{' or None' if name == 'bias' else ''}, "
                            f"got {type(value).__name__}")
    if bias is not None and input.dim() >= 1:
        lead = tuple(input.shape[:-1])
        out = ember.addmm(bias, input.reshape(math.prod(lead), input.shape[-1]), weight.t())
        return out if input.dim() == 2 else out.reshape(*lead, out.shape[-1])
    out = ember.matmul(input, weight.t())
    return out + bias if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    # out[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j]
    tmp = ember.matmul(input1.unsqueeze(-2).unsqueeze(-2), weight)  # [..., O, 1, J]
    out = ember.matmul(tmp, input2.unsqueeze(-2).unsqueeze(-1)).squeeze(-1).squeeze(-1)
    return out + bias if bias is not None else out


# ---- misc -------------------------------------------------------------------------------------

def one_hot(tensor, num_classes=-1):
    return _C._one_hot(tensor, num_classes)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = ember.clamp(ember.norm(input, p, dim, keepdim=True), min=eps)
    return input / denom.expand_as(input)


def _edge_pieces(x, dim, left, right, mode):
    """The slices of x that reflect / replicate / circular padding puts
    before and after it along `dim`."""
    n = x.shape[dim]
    if mode == "reflect":
        if left >= n or right >= n:
            raise ValueError(f"pad: padding ({left}, {right}) should be less than the input size {n} "
                             f"of dimension {dim} for mode 'reflect'")
        return x.narrow(dim, 1, left).flip(dim), x.narrow(dim, n - 1 - right, right).flip(dim)
    if mode == "replicate":
        if n == 0:
            raise ValueError(f"pad: cannot replicate-pad the empty dimension {dim}")
        def edge(start, width):
            shape = list(x.shape)
            shape[dim] = width
            return x.narrow(dim, start, 1).expand(*shape)
        return edge(0, left), edge(n - 1, right)
    if left > n or right > n:
        raise ValueError(f"pad: padding ({left}, {right}) should be at most the input size {n} "
                         f"of dimension {dim} for mode 'circular'")
    return x.narrow(dim, n - left, left), x.narrow(dim, 0, right)


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad) // 2 dimensions: pad lists (left, right) pairs
    from the last dimension backwards. Modes: constant (value, default 0;
    negative widths crop), reflect, replicate, circular."""
    if len(pad) % 2 != 0:
        raise ValueError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise ValueError("Padding length should be less than or equal to two times the input dimension "
                         f"but got padding length {len(pad)} and input of dimension {input.dim()}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode '{mode}' is not implemented "
                                  "(constant, reflect, replicate and circular are)")
    if mode != "constant":
        if value:
            raise ValueError(f"pad: padding mode '{mode}' doesn't take in value argument")
        if any(p < 0 for p in pad):
            raise ValueError(f"pad: negative padding is only supported for mode 'constant', got {tuple(pad)}")
    value = 0.0 if value is None else value
    out = input
    if mode == "constant":
        return _constant_pad(input, pad, value)
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        before, after = _edge_pieces(out, dim, pad[2 * i], pad[2 * i + 1], mode)
        out = ember.cat([before, out, after], dim)
    return out


def _constant_pad(input, pad, value):
    """Negative widths crop first (narrow); then one tensor of the padded shape
    filled with value takes the input in one copy (a cat per padded dim moved
    every element once per dim)."""
    out = input
    widths = []
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if left < 0:
            out = out.narrow(dim, -left, out.shape[dim] + left)
        if right < 0:
            out = out.narrow(dim, 0, out.shape[dim] + right)
        widths.append((dim, max(left, 0), max(right, 0)))
    if all(left == 0 and right == 0 for _, left, right in widths):
        return out
    shape = list(out.shape)
    inside = [slice(None)] * out.dim()
    for dim, left, right in widths:
        shape[dim] += left + right
        inside[dim] = slice(left, left + out.shape[dim])
    result = ember.full(shape, value, dtype=out.dtype, device=out.device)
    result[tuple(inside)] = out
    return result


if not _have("dropout"):
    def dropout(input, p=0.5, training=True, inplace=False):
        if p < 0.0 or p > 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        if not training or p == 0.0:
            return input
        if p == 1.0:
            out = input * 0.0
        else:
            keep = ember.empty_like(input).bernoulli_(1.0 - p)
            out = input * keep * (1.0 / (1.0 - p))
        if inplace:
            with ember.no_grad():
                input.copy_(out)
            return input
        return out


if not _have("conv1d") and _have("conv2d"):
    def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        """conv2d over a height-1 image."""
        def one(v):
            return v[0] if isinstance(v, (tuple, list)) else v

        batched = input.dim() == 3
        x = (input if batched else input.unsqueeze(0)).unsqueeze(2)
        pad = padding if isinstance(padding, str) else (0, one(padding))
        out = conv2d(x, weight.unsqueeze(2), bias, (1, one(stride)), pad, (1, one(dilation)), groups).squeeze(2)
        return out if batched else out.squeeze(0)


# ---- attention --------------------------------------------------------------------------------

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(Q K^T * scale + mask) V, as torch.nn.functional.scaled_dot_product_attention.

    query [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev]. attn_mask broadcasts to
    [..., L, S]: bool (True = attend) or float (added to the scores). is_causal masks key j for query i
    when j > i (tril aligned top-left) and excludes attn_mask. scale defaults to 1 / sqrt(E). dropout_p
    is applied whenever it is > 0 (pass 0.0 in eval mode). enable_gqa lets key/value have fewer heads
    (dim -3) than query, each serving a group of query heads.

    CUDA float16/bfloat16 inputs without a mask or dropout, with E == Ev a multiple of 8 up to 128, run
    as one fused (flash) kernel; everything else as matmul, softmax and dropout ops (the math path).
    ember.backends.cuda.enable_flash_sdp / enable_math_sdp switch the two paths.
    """
    return _nn.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                            enable_gqa)


# ---- interpolate, pixel_shuffle, prelu, huber_loss, pairwise_distance (ember ops, any device), and
# dropout1d/3d reading unbatched input as torch does -------------------------------------------------

from ember.nn._functional_extra import (dropout1d, dropout3d, huber_loss, interpolate,  # noqa: E402,F401
                                        pairwise_distance, pixel_shuffle, pixel_unshuffle, prelu, upsample,
                                        upsample_bilinear, upsample_nearest)

# ---- more activations, losses and layers composed of ember ops (any device, autograd) ----------------

from ember.nn._functional_activation import *  # noqa: E402,F401,F403
from ember.nn._functional_loss import *  # noqa: E402,F401,F403
from ember.nn._functional_layers import *  # noqa: E402,F401,F403
from ember.nn._functional_pool import *  # noqa: E402,F401,F403
from ember.nn._functional_grid import *  # noqa: E402,F401,F403
from ember.nn._functional_3d import *  # noqa: E402,F401,F403
from ember.nn._functional_ctc import *  # noqa: E402,F401,F403
from ember.nn._functional_mha import *  # noqa: E402,F401,F403
native_channel_shuffle = channel_shuffle  # noqa: F405  (torch's name for the same op)
from ember.nn._functional_embedding import embedding  # noqa: E402,F811  (adds max_norm to the kernel's)
