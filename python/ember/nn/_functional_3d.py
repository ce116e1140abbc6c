"""3-D convolution and pooling, composed of the 2-D kernels, views and index ops, so they run on every
device and under autograd with no kernels of their own.

conv3d folds the kernel's depth taps into the channels of a single conv2d: the input's depth windows (an
unfold view) become a batch of N*OD images with KD*C channels, and the weight [OC, C/g, KD, KH, KW]
becomes [OC, KD*C/g, KH, KW] in the same order, so the whole op is one GEMM-backed conv2d (cuDNN on a
GPU). conv_transpose3d runs one conv_transpose2d whose output channels carry the depth taps and adds
each tap into its output depth with index_add. Max and average pooling read their windows through
unfold views; adaptive pooling averages with one small matrix per dimension, or gathers its windows."""
import numpy as np

import ember
from ember import _C

__all__ = ["conv3d", "conv_transpose3d", "max_pool3d", "max_pool3d_with_indices", "avg_pool3d",
           "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "lp_pool3d",
           "max_unpool3d"]


def _triple(value, what, op):
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return (int(value[0]),) * 3
        if len(value) != 3:
            raise RuntimeError(f"{op}: expected {what} to be a single integer value or a list of 3 values, "
                               f"but got {what}={list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * 3


def _batched(input, op):
    """(5-D input, whether it was unbatched); torch accepts [C, D, H, W] as one image."""
    if not isinstance(input, ember.Tensor):
        raise TypeError(f"{op}: expected a Tensor as input, got {type(input).__name__}")
    if input.dim() == 4:
        return input.unsqueeze(0), True
    if input.dim() != 5:
        raise RuntimeError(f"{op}: expected a 4-D (unbatched) or 5-D (batched) input, but got an input of "
                           f"size {list(input.shape)}")
    return input, False


def _check_operands(op, input, weight, bias):
    """Same device and (outside autocast) same dtype, said in conv3d's words rather than conv2d's."""
    tensors = [("input", input), ("weight", weight)] + ([("bias", bias)] if bias is not None else [])
    devices = {str(t.device) for _, t in tensors}
    if len(devices) > 1:
        where = ", ".join(f"{name} on {t.device}" for name, t in tensors)
        raise RuntimeError(f"{op}: expected all tensors on the same device, but got {where}")
    if not ember.is_autocast_enabled(input.device.type) and len({t.dtype for _, t in tensors}) > 1:
        kinds = ", ".join(f"{name} ({t.dtype})" for name, t in tensors)
        raise RuntimeError(f"{op}: expected {kinds} to have the same dtype")


def _positive(values, what, op):
    if any(v <= 0 for v in values):
        raise RuntimeError(f"{op}: {what} must be positive, got {list(values)}")


def _same_padding(x, kernel, dilation, stride, op):
    """Pads x for padding='same' (the odd extra at the end, as torch) and returns (x, zero padding)."""
    if any(s != 1 for s in stride):
        raise RuntimeError(f"{op}: padding='same' is not supported for strided convolutions")
    totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
    if all(t % 2 == 0 for t in totals):
        return x, tuple(t // 2 for t in totals)
    pads = []
    for t in reversed(totals):
        pads += [t // 2, t - t // 2]
    return ember.nn.functional.pad(x, pads), (0, 0, 0)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution of [N, C, D, H, W] (or [C, D, H, W]) by [OC, C/groups, KD, KH, KW]."""
    op = "conv3d"
    x, unbatched = _batched(input, op)
    if weight.dim() != 5:
        raise RuntimeError(f"{op}: expected a 5-D weight [out_channels, in_channels/groups, kD, kH, kW], "
                           f"got size {list(weight.shape)}")
    _check_operands(op, input, weight, bias)
    stride, dilation = _triple(stride, "stride", op), _triple(dilation, "dilation", op)
    _positive(stride, "stride", op)
    _positive(dilation, "dilation", op)
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f"{op}: non-positive groups is not supported, got {groups}")
    N, C, _, H, W = x.shape
    OC, Cg, KD, KH, KW = weight.shape
    if OC % groups != 0:
        raise RuntimeError(f"{op}: given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size {list(weight.shape)}")
    if Cg * groups != C:
        raise RuntimeError(f"{op}: given groups={groups}, weight of size {list(weight.shape)}, expected input "
                           f"{list(input.shape)} to have {Cg * groups} channels, but got {C} channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != OC):
        raise RuntimeError(f"{op}: expected bias of size [{OC}], got {list(bias.shape)}")
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"{op}: invalid padding string {padding!r}, should be one of 'valid', 'same'")
        if padding == "valid":
            padding = (0, 0, 0)
        else:
            x, padding = _same_padding(x, (KD, KH, KW), dilation, stride, op)
            N, C, _, H, W = x.shape
    padding = _triple(padding, "padding", op)
    if any(p < 0 for p in padding):
        raise RuntimeError(f"{op}: negative padding is not supported, got {list(padding)}")
    (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = stride, padding, dilation
    if pd:
        x = ember.nn.functional.pad(x, [0, 0, 0, 0, pd, pd])  # conv2d pads H and W itself
    depth, span = x.shape[2], dd * (KD - 1) + 1
    if depth < span:
        raise RuntimeError(f"{op}: input of size {list(input.shape)} with padding {list(padding)} has depth "
                           f"{depth}, less than the dilated kernel depth {span}")
    OD = (depth - span) // sd + 1
    # [N, g, C/g, OD, H, W, KD] -> [N*OD, g*KD*C/g, H, W]: each group's channels keep (tap, channel) order.
    windows = x.reshape(N, groups, Cg, depth, H, W).unfold(3, span, sd)
    if dd > 1:
        windows = windows[..., ::dd]
    images = windows.permute(0, 3, 1, 6, 2, 4, 5).reshape(N * OD, groups * KD * Cg, H, W)
    taps = weight.permute(0, 2, 1, 3, 4).reshape(OC, KD * Cg, KH, KW)
    y = _C._nn.conv2d(images, taps, bias, (sh, sw), (ph, pw), (dh, dw), groups)
    out = y.reshape(N, OD, OC, y.shape[2], y.shape[3]).permute(0, 2, 1, 3, 4).contiguous()
    return out.squeeze(0) if unbatched else out


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv3d: [N, Cin, D, H, W] by a weight [Cin, Cout/groups, KD, KH, KW]."""
    op = "conv_transpose3d"
    x, unbatched = _batched(input, op)
    if weight.dim() != 5:
        raise RuntimeError(f"{op}: expected a 5-D weight [in_channels, out_channels/groups, kD, kH, kW], "
                           f"got size {list(weight.shape)}")
    _check_operands(op, input, weight, bias)
    stride, dilation = _triple(stride, "stride", op), _triple(dilation, "dilation", op)
    padding, output_padding = _triple(padding, "padding", op), _triple(output_padding, "output_padding", op)
    _positive(stride, "stride", op)
    _positive(dilation, "dilation", op)
    if any(p < 0 for p in padding) or any(p < 0 for p in output_padding):
        raise RuntimeError(f"{op}: negative padding is not supported, got padding {list(padding)} and "
                           f"output_padding {list(output_padding)}")
    for op_pad, s, d in zip(output_padding, stride, dilation):
        if op_pad >= s and op_pad >= d:
            raise RuntimeError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={list(output_padding)}, stride={list(stride)}, "
                               f"dilation={list(dilation)}")
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f"{op}: non-positive groups is not supported, got {groups}")
    N, Cin, ID, H, W = x.shape
    if weight.shape[0] != Cin or Cin % groups != 0:
        raise RuntimeError(f"{op}: given groups={groups}, expected weight of size {list(weight.shape)} to have "
                           f"{Cin} rows (the input's channels, divisible by groups), input is {list(input.shape)}")
    Coutg, KD, KH, KW = weight.shape[1:]
    Cout = Coutg * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != Cout):
        raise RuntimeError(f"{op}: expected bias of size [{Cout}], got {list(bias.shape)}")
    (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = stride, padding, dilation
    natural = (ID - 1) * sd + dd * (KD - 1) + 1
    OD = natural - 2 * pd + output_padding[0]
    if OD <= 0:
        raise RuntimeError(f"{op}: input of size {list(input.shape)} with padding {list(padding)} gives an "
                           f"output depth of {OD}")
    # One conv_transpose2d whose output channels are (group, tap, channel) ...
    images = x.permute(0, 2, 1, 3, 4).reshape(N * ID, Cin, H, W)
    taps = weight.permute(0, 2, 1, 3, 4).reshape(Cin, KD * Coutg, KH, KW)
    y = _C._nn.conv_transpose2d(images, taps, None, (sh, sw), (ph, pw), tuple(output_padding[1:]), groups,
                                (dh, dw))
    OH, OW = y.shape[2], y.shape[3]
    y = y.reshape(N, ID, groups, KD, Coutg, OH, OW).permute(0, 2, 4, 1, 3, 5, 6).reshape(N, Cout, ID * KD, OH, OW)
    # ... then input depth i's tap kd lands at full depth i*sd + kd*dd.
    positions = (np.arange(ID)[:, None] * sd + np.arange(KD)[None, :] * dd).reshape(-1)
    index = ember.tensor(positions, dtype=ember.int64, device=x.device)
    full = ember.zeros(N, Cout, max(natural, pd + OD), OH, OW, dtype=y.dtype, device=y.device)
    out = full.index_add(2, index, y).narrow(2, pd, OD)
    out = out + bias.reshape(1, Cout, 1, 1, 1) if bias is not None else out.contiguous()
    return out.squeeze(0) if unbatched else out


def _pool_geometry(op, x, kernel_size, stride, padding, dilation, ceil_mode):
    kernel = _triple(kernel_size, "kernel_size", op)
    stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else \
        _triple(stride, "stride", op)
    padding, dilation = _triple(padding, "padding", op), _triple(dilation, "dilation", op)
    _positive(kernel, "kernel_size", op)
    _positive(stride, "stride", op)
    _positive(dilation, "dilation", op)
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0 or p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, but got "
                               f"pad={list(padding)}, kernel_size={list(kernel)} and dilation={list(dilation)}")
    outs = []
    for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation):
        room = n + 2 * p - d * (k - 1) - 1
        o = (-(-room // s) if ceil_mode else room // s) + 1
        if ceil_mode and (o - 1) * s >= n + p:  # the last window must start inside the input or left pad
            o -= 1
        outs.append(o)
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"{op}: given input of size {list(x.shape)}, the calculated output size {outs} is "
                           f"too small")
    return kernel, stride, padding, dilation, outs


def _windows(x, kernel, stride, padding, dilation, outs, fill):
    """[N, C, OD, OH, OW, KD*KH*KW]: x padded with `fill` (and cropped or extended for ceil_mode), viewed
    through unfold, dilated taps picked, flattened (one copy)."""
    pads = []
    for n, k, s, p, d, o in zip(reversed(x.shape[2:]), reversed(kernel), reversed(stride), reversed(padding),
                                reversed(dilation), reversed(outs)):
        pads += [p, (o - 1) * s + d * (k - 1) + 1 - n - p]
    padded = ember.nn.functional.pad(x, pads, value=fill) if any(pads) else x
    view = padded
    for dim, (k, s, d) in enumerate(zip(kernel, stride, dilation)):
        view = view.unfold(2 + dim, d * (k - 1) + 1, s)
    if any(d > 1 for d in dilation):
        view = view[..., ::dilation[0], ::dilation[1], ::dilation[2]]
    N, C = x.shape[:2]
    return view.reshape(N, C, *outs, kernel[0] * kernel[1] * kernel[2])


def _check_floating(op, x):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, got {x.dtype}")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """(values, indices into each input volume D*H*W), torch's layout for max_unpool3d."""
    op = "max_pool3d"
    x, unbatched = _batched(input, op)
    _check_floating(op, x)
    kernel, stride, padding, dilation, outs = _pool_geometry(op, x, kernel_size, stride, padding, dilation,
                                                              ceil_mode)
    values, local = _windows(x, kernel, stride, padding, dilation, outs, float("-inf")).max(-1)
    # Window-local tap -> input coordinates -> flat index into D*H*W.
    H, W = x.shape[3:]
    (_, KH, KW), (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = kernel, stride, padding, dilation
    dev = x.device

    def base(o, s, p, shape):
        return ember.tensor((np.arange(o) * s - p).reshape(shape), dtype=ember.int64, device=dev)

    d = base(outs[0], sd, pd, (-1, 1, 1)) + local.div(KH * KW, rounding_mode="floor") * dd
    h = base(outs[1], sh, ph, (-1, 1)) + local.div(KW, rounding_mode="floor").remainder(KH) * dh
    w = base(outs[2], sw, pw, (-1,)) + local.remainder(KW) * dw
    indices = (d * H + h) * W + w
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _window_counts(n, k, s, p, o, include_pad):
    """How many of each 1-D window's positions torch divides by in avg_pool."""
    start = np.arange(o) * s - p
    end = np.minimum(start + k, n + p)
    if include_pad:
        return end - start
    return np.minimum(end, n) - np.maximum(start, 0)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    op = "avg_pool3d"
    x, unbatched = _batched(input, op)
    _check_floating(op, x)
    kernel, stride, padding, dilation, outs = _pool_geometry(op, x, kernel_size, stride, padding, 1, ceil_mode)
    sums = _windows(x, kernel, stride, padding, dilation, outs, 0.0).sum(-1)
    if divisor_override is not None:
        if int(divisor_override) == 0:
            raise RuntimeError(f"{op}: divisor must be not zero")
        out = sums / float(divisor_override)
    else:
        counts = [_window_counts(n, k, s, p, o, count_include_pad)
                  for n, k, s, p, o in zip(x.shape[2:], kernel, stride, padding, outs)]
        divisor = counts[0][:, None, None] * counts[1][None, :, None] * counts[2][None, None, :]
        out = sums / ember.tensor(divisor.astype(np.float64), dtype=sums.dtype, device=sums.device)
    return out.squeeze(0) if unbatched else out


def _adaptive_sizes(op, x, output_size):
    sizes = list(output_size) if isinstance(output_size, (tuple, list)) else [output_size] * 3
    if len(sizes) != 3:
        raise RuntimeError(f"{op}: output_size must have 3 elements, got {output_size}")
    sizes = [int(n) if o is None else int(o) for o, n in zip(sizes, x.shape[2:])]
    if any(o <= 0 for o in sizes):
        raise RuntimeError(f"{op}: output_size must be positive, got {sizes}")
    if any(n == 0 for n in x.shape[2:]):
        raise RuntimeError(f"{op}: expected an input with non-zero spatial sizes, got {list(x.shape)}")
    return sizes


def _adaptive_bounds(n, o):
    """Start and end of each of o adaptive windows over n positions (torch's floor/ceil rule)."""
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def adaptive_avg_pool3d(input, output_size):
    """Box averages are separable: one [o, n] averaging matrix per dimension, applied with matmul."""
    op = "adaptive_avg_pool3d"
    x, unbatched = _batched(input, op)
    _check_floating(op, x)
    sizes = _adaptive_sizes(op, x, output_size)
    if all(n % o == 0 for n, o in zip(x.shape[2:], sizes)):  # equal boxes: one mean over a reshape
        (N, C), (OD, OH, OW) = x.shape[:2], sizes
        D, H, W = x.shape[2:]
        out = x.reshape(N, C, OD, D // OD, OH, H // OH, OW, W // OW).mean((3, 5, 7))
        return out.squeeze(0) if unbatched else out
    out = x
    for dim, (n, o) in enumerate(zip(x.shape[2:], sizes)):
        if n == o:
            continue
        start, end = _adaptive_bounds(n, o)
        weights = np.zeros((n, o))
        for j in range(o):
            weights[start[j]:end[j], j] = 1.0 / (end[j] - start[j])
        matrix = ember.tensor(weights, dtype=out.dtype, device=out.device)
        out = (out.transpose(2 + dim, -1) @ matrix).transpose(2 + dim, -1)
    out = out.contiguous()
    return out.squeeze(0) if unbatched else out


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """Gathers every window (padded to the longest by repeating its last position, which leaves the max
    unchanged), then takes the max and maps the winning tap back to its flat index in D*H*W."""
    op = "adaptive_max_pool3d"
    x, unbatched = _batched(input, op)
    _check_floating(op, x)
    sizes = _adaptive_sizes(op, x, output_size)
    N, C, D, H, W = x.shape
    picks, lengths = [], []
    gathered = x
    for dim, (n, o) in enumerate(zip((D, H, W), sizes)):
        start, end = _adaptive_bounds(n, o)
        length = int((end - start).max())
        pick = np.minimum(start[:, None] + np.arange(length)[None, :], end[:, None] - 1)  # [o, length]
        index = ember.tensor(pick.reshape(-1), dtype=ember.int64, device=x.device)
        gathered = gathered.index_select(2 + dim, index)
        picks.append(pick)
        lengths.append(length)
    (OD, OH, OW), (LD, LH, LW) = sizes, lengths
    gathered = gathered.reshape(N, C, OD, LD, OH, LH, OW, LW).permute(0, 1, 2, 4, 6, 3, 5, 7)
    values, local = gathered.reshape(N, C, OD, OH, OW, LD * LH * LW).max(-1)
    flat = ((picks[0][:, None, None, :, None, None] * H + picks[1][None, :, None, None, :, None]) * W
            + picks[2][None, None, :, None, None, :]).reshape(OD, OH, OW, LD * LH * LW)
    table = ember.tensor(flat, dtype=ember.int64, device=x.device).expand(N, C, OD, OH, OW, LD * LH * LW)
    indices = table.gather(-1, local.unsqueeze(-1)).squeeze(-1)
    if unbatched:
        values, indices = values.squeeze(0), indices.squeeze(0)
    return (values, indices) if return_indices else values


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return adaptive_max_pool3d_with_indices(input, output_size, return_indices)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p), as the window average of x^p times the window size."""
    kd, kh, kw = _triple(kernel_size, "kernel_size", "lp_pool3d")
    out = avg_pool3d(input.pow(norm_type), (kd, kh, kw), stride, 0, ceil_mode)
    return (ember.sign(out) * ember.relu(out.abs())).mul(kd * kh * kw).pow(1.0 / norm_type)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Puts each value of input at its max_pool3d index in a zero tensor of the unpooled size."""
    from ember.nn._functional_pool import _unpool
    return _unpool(input, indices, 3, kernel_size, stride, padding, output_size, "max_unpool3d")
