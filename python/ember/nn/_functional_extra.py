"""More of torch.nn.functional, composed of ember ops (so they run on every device, with autograd):
interpolate, pixel_shuffle / pixel_unshuffle, prelu, huber_loss, pairwise_distance.
Re-exported by ember.nn.functional."""
import math
import numbers
import warnings

import numpy as np

import ember
from ember import _C
from ember.nn._reduction import reduce_loss
from ember.nn._resample_taps import antialias_taps, cubic_taps

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
           "prelu", "huber_loss", "pairwise_distance", "dropout1d", "dropout3d"]

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}


# ---- interpolate --------------------------------------------------------------------------------------

def _output_size(input, size, scale_factor, spatial):
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    shape = list(input.shape[2:])
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != spatial:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {shape} and output size of {list(size)}. Please provide "
                                 "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                                 "format.")
            return [int(s) for s in size], None
        return [int(size)] * spatial, None
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != spatial:
            raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {shape} and scale_factor of shape {list(scale_factor)}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, "
                             "s2, ...,sK) format.")
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * spatial
    return [int(math.floor(n * s)) for n, s in zip(shape, scales)], scales


def _nearest_index(n_in, n_out, scale, exact):
    """torch's nearest source index: floor(dst * s) (or floor((dst + 0.5) * s) for nearest-exact) with
    s = 1 / scale_factor when one was given, n_in / n_out otherwise, computed in float32 as torch does."""
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in) / np.float32(n_out)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor(((dst + np.float32(0.5)) if exact else dst) * s).astype(np.int64)
    return np.minimum(src, n_in - 1)


def _linear_weights(n_in, n_out, scale, align_corners):
    """Source indices i0, i1 and the weight of i1 for each output position (torch's
    area_pixel_compute_source_index)."""
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
        src = np.maximum(s * (dst + 0.5) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, src - i0


def _index(array, like):
    return ember.tensor(array, dtype=ember.int64, device=like.device)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial dimensions of [N, C, *spatial] input (3-D, 4-D or 5-D) to `size` or by
    `scale_factor`, as torch.nn.functional.interpolate. Modes: nearest, nearest-exact, linear (3-D),
    bilinear (4-D), bicubic (4-D), trilinear (5-D), area (adaptive average pooling); antialias
    for bilinear and bicubic. Interpolating modes resample one dimension at a time (gather each output's
    source taps, weight them), which is the same function as the 2-D / 3-D formula."""
    if not isinstance(input, ember.Tensor):
        raise TypeError(f"interpolate: expected a Tensor input, got {type(input).__name__}")
    if input.dim() not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor "
                         "as input")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif mode in _LINEAR_MODES:
        align_corners = bool(align_corners) if align_corners is not None else False
        need = _LINEAR_MODES[mode] + 2
        if input.dim() != need:
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need}D input")
    elif mode == "bicubic":
        align_corners = bool(align_corners) if align_corners is not None else False
        if input.dim() != 4:
            raise NotImplementedError(f"Got {input.dim()}D input, but bicubic mode needs 4D input")
    else:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  "for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    spatial = input.dim() - 2
    out_size, scales = _output_size(input, size, scale_factor, spatial)
    if any(s <= 0 for s in out_size) or any(n <= 0 for n in input.shape[2:]):
        raise RuntimeError(f"interpolate: input {list(input.shape[2:])} and output {out_size} sizes should be "
                           "greater than 0")
    if recompute_scale_factor:
        scales = None
    if mode == "area":
        if spatial == 1:
            return _C._nn.adaptive_avg_pool1d(input, out_size)
        if spatial == 2:
            return _C._nn.adaptive_avg_pool2d(input, out_size)
        from ember.nn._functional_3d import adaptive_avg_pool3d
        return adaptive_avg_pool3d(input, out_size)
    out = input
    integral = not input.is_floating_point() and mode not in ("nearest", "nearest-exact")
    if integral:  # weighted sums in float32, rounded back (torch's uint8 bilinear)
        out = out.to(ember.float32)
    # The last dimension first: for bilinear that is torch's order of the weighted sums.
    for d in reversed(range(spatial)):
        dim = 2 + d
        n_in, n_out = input.shape[dim], out_size[d]
        scale = scales[d] if scales is not None else None
        if mode in ("nearest", "nearest-exact"):
            out = out.index_select(dim, _index(_nearest_index(n_in, n_out, scale, mode == "nearest-exact"), out))
            continue
        if mode == "bicubic" or antialias:
            if antialias:
                index, weights = antialias_taps(n_in, n_out, scale, align_corners, cubic=mode == "bicubic")
            else:
                index, weights = cubic_taps(n_in, n_out, scale, align_corners)
            out = _weighted_taps(out, dim, index, weights)
            continue
        i0, i1, w1 = _linear_weights(n_in, n_out, scale, align_corners)
        shape = [1] * out.dim()
        shape[dim] = n_out
        w1t = ember.tensor(w1.reshape(shape), dtype=out.dtype, device=out.device)
        w0t = ember.tensor((1.0 - w1).reshape(shape), dtype=out.dtype, device=out.device)
        out = out.index_select(dim, _index(i0, out)) * w0t + out.index_select(dim, _index(i1, out)) * w1t
    if not integral:
        return out
    if mode == "bicubic" or antialias:  # cubic weights overshoot: saturate to the integer range
        info = ember.iinfo(input.dtype)
        out = out.clamp(info.min, info.max)
    return (out + 0.5).floor().to(input.dtype)  # halves round up, as torch


def _weighted_taps(x, dim, index, weights):
    """sum over k of weights[:, k] * x.index_select(dim, index[:, k]): one resampled dimension."""
    shape = [1] * x.dim()
    shape[dim] = index.shape[0]
    out = None
    for k in range(index.shape[1]):
        w = ember.tensor(weights[:, k].reshape(shape), dtype=x.dtype, device=x.device)
        term = x.index_select(dim, _index(index[:, k], x)) * w
        out = term if out is None else out + term
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- pixel shuffle ------------------------------------------------------------------------------------

def pixel_shuffle(input, upscale_factor):
    """[*, C r^2, H, W] -> [*, C, H r, W r]."""
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if c % (r * r) != 0:
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
                           f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = tuple(input.shape[:-3])
    x = input.reshape(-1, c // (r * r), r, r, h, w).permute(0, 1, 4, 2, 5, 3)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H r, W r] -> [*, C r^2, H, W]."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if h % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r != 0:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    lead = tuple(input.shape[:-3])
    x = input.reshape(-1, c, h // r, r, w // r, r).permute(0, 1, 3, 5, 2, 4)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# ---- prelu, losses, distances -------------------------------------------------------------------------

def prelu(input, weight):
    """max(0, x) + weight * min(0, x); weight has 1 element or one per channel (dimension 1)."""
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.dim() >= 2 else 1
        if n != channels:
            raise RuntimeError(f"prelu: Mismatch of parameter numbers and input channel size. Found parameter "
                               f"numbers = {n} and channel size = {channels}.")
        weight = weight.reshape([n] + [1] * (input.dim() - 2))
    else:
        weight = weight.reshape(())
    return ember.where(input > 0, input, input * weight)


def warn_target_size(input, target):
    """torch's UserWarning (attributed to the loss function's caller) when a pointwise loss's target
    has another shape than its input: they broadcast, which is rarely what was meant."""
    if isinstance(input, ember.Tensor) and isinstance(target, ember.Tensor) and input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, delta (|d| - delta / 2) elsewhere, d = input - target."""
    if delta <= 0:
        raise RuntimeError(f"huber_loss does not support non-positive values for delta, got {delta}")
    warn_target_size(input, target)
    d = input - target  # broadcasts, as torch does
    ad = d.abs()
    loss = ember.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
    return reduce_loss(loss, reduction, "huber_loss")


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps over the last dimension."""
    if not isinstance(p, numbers.Real):
        raise TypeError(f"pairwise_distance: p must be a number, got {type(p).__name__}")
    if x1.dim() == 0 and x2.dim() == 0:
        raise RuntimeError("pairwise_distance: expected at least one 1-D input, got two scalars")
    return ember.norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


# ---- channel dropout of unbatched input ----------------------------------------------------------------
# The C++ kernels (ember._C._nn.dropout1d/3d) take dimension 1 as the channels; torch reads a 2-D input
# to dropout1d as unbatched (C, L) and a 4-D input to dropout3d as (C, D, H, W): their channels are
# dimension 0, so these add the batch dimension first.

def dropout1d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.dim() == 3:
        return _C._nn.dropout1d(input, p, training, inplace)
    out = _C._nn.dropout1d(input.unsqueeze(0), p, training, inplace)
    return input if inplace else out.squeeze(0)


def dropout3d(input, p=0.5, training=True, inplace=False):
    if input.dim() != 4:
        return _C._nn.dropout3d(input, p, training, inplace)
    out = _C._nn.dropout3d(input.unsqueeze(0), p, training, inplace)
    return input if inplace else out.squeeze(0)
