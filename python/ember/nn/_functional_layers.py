"""More torch.nn.functional layers, composed of ember ops (every device, autograd): instance_norm,
local_response_norm, unfold / fold (im2col / col2im by index gathering), embedding_bag.
Re-exported by ember.nn.functional."""
import numpy as np

import ember

__all__ = ["instance_norm", "local_response_norm", "unfold", "fold", "embedding_bag"]


# ---- normalization ------------------------------------------------------------------------------------

def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalizes each (sample, channel) plane of [N, C, *] input over its spatial elements. With
    use_input_stats and running stats, those move towards the batch's per-channel average statistics
    (the unbiased variance, as batch_norm); without use_input_stats they are used instead."""
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dimensions [N, C, *], got {input.dim()}")
    dims = list(range(2, input.dim()))
    spatial = 1
    for s in input.shape[2:]:
        spatial *= s
    shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
    if use_input_stats:
        if spatial <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{list(input.shape)}")
        mean = input.mean(dims, keepdim=True)
        var = input.var(dims, unbiased=False, keepdim=True)
        if running_mean is not None or running_var is not None:
            with ember.no_grad():
                if running_mean is not None:
                    batch_mean = mean.reshape(input.shape[0], input.shape[1]).mean(0)
                    running_mean.mul_(1 - momentum).add_(batch_mean.to(running_mean.dtype) * momentum)
                if running_var is not None:
                    unbiased = var.reshape(input.shape[0], input.shape[1]).mean(0) * (spatial / (spatial - 1))
                    running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("instance_norm: use_input_stats=False needs running_mean and running_var")
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
    out = (input - mean) * ember.rsqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha / size * sum of x^2 over the `size` neighbouring channels)^beta, the window
    running from c - size // 2 to c + (size - 1) // 2, zero beyond the edges."""
    if input.dim() < 3:
        raise ValueError(f"local_response_norm: Expected 3D or higher dimensionality input (got {input.dim()} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    zeros = [0] * (2 * (input.dim() - 2))
    padded = ember.nn.functional.pad(sq, zeros + [size // 2, (size - 1) // 2])
    window = padded.narrow(1, 0, c)
    for j in range(1, size):
        window = window + padded.narrow(1, j, c)
    div = (window * (alpha / size) + k) ** beta
    return input / div


# ---- unfold / fold --------------------------------------------------------------------------------------

def _pair(v, name, op):
    v = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(v) != 2:
        raise ValueError(f"{op}: {name} must be an int or a pair of ints, got {v}")
    return tuple(int(x) for x in v)


def _block_index(padded_hw, kernel, dilation, stride, op, out_hw=None):
    """For each kernel offset (row-major) and each block position (row-major), the flat index of the
    element in the padded [H, W] plane: an int64 numpy array of shape [kh * kw * L], and L."""
    (hp, wp), (kh, kw), (dh, dw), (sh, sw) = padded_hw, kernel, dilation, stride
    oh = (hp - dh * (kh - 1) - 1) // sh + 1
    ow = (wp - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"{op}: the padded input {hp}x{wp} is smaller than the dilated kernel "
                           f"{dh * (kh - 1) + 1}x{dw * (kw - 1) + 1}: no blocks")
    rows = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(oh) * sh)[None, None, :, None]
    cols = (np.arange(kw) * dw)[None, :, None, None] + (np.arange(ow) * sw)[None, None, None, :]
    return (rows * wp + cols).reshape(-1).astype(np.int64), oh * ow


def _check_fold_args(kernel, dilation, padding, stride, op):
    for name, v, low in (("kernel_size", kernel, 1), ("dilation", dilation, 1), ("padding", padding, 0),
                         ("stride", stride, 1)):
        if any(x < low for x in v):
            raise RuntimeError(f"{op}: {name} should be {'non-negative' if low == 0 else 'greater than zero'}, "
                               f"but got {name}: {v}")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: [N, C, H, W] (or [C, H, W]) -> [N, C * kh * kw, L], each column one sliding block, the
    rows ordered channel, kernel row, kernel column."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)")
    kernel, dilation, padding, stride = (_pair(kernel_size, "kernel_size", "unfold"),
                                         _pair(dilation, "dilation", "unfold"), _pair(padding, "padding", "unfold"),
                                         _pair(stride, "stride", "unfold"))
    _check_fold_args(kernel, dilation, padding, stride, "unfold")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    if padding != (0, 0):
        x = ember.nn.functional.pad(x, (padding[1], padding[1], padding[0], padding[0]))
    n, c, hp, wp = x.shape
    index, blocks = _block_index((hp, wp), kernel, dilation, stride, "unfold")
    cols = x.reshape(n, c, hp * wp).index_select(2, ember.tensor(index, device=x.device))
    out = cols.reshape(n, c * kernel[0] * kernel[1], blocks)
    return out if batched else out.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, unfold's adjoint: [N, C * kh * kw, L] (or unbatched) -> [N, C, H, W], overlapping
    blocks summed."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.dim()}D)")
    out_hw = _pair(output_size, "output_size", "fold")
    kernel, dilation, padding, stride = (_pair(kernel_size, "kernel_size", "fold"),
                                         _pair(dilation, "dilation", "fold"), _pair(padding, "padding", "fold"),
                                         _pair(stride, "stride", "fold"))
    _check_fold_args(kernel, dilation, padding, stride, "fold")
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    n, ckk, length = x.shape
    kk = kernel[0] * kernel[1]
    if ckk % kk != 0:
        raise RuntimeError(f"fold: Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={ckk} and kernel_size={kernel}")
    hp, wp = out_hw[0] + 2 * padding[0], out_hw[1] + 2 * padding[1]
    index, blocks = _block_index((hp, wp), kernel, dilation, stride, "fold")
    if blocks != length:
        raise RuntimeError(f"fold: Given output_size={out_hw}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {blocks}, but got input.size(2)={length}.")
    c = ckk // kk
    plane = ember.zeros(n, c, hp * wp, dtype=x.dtype, device=x.device)
    plane = plane.index_add(2, ember.tensor(index, device=x.device), x.reshape(n, c, kk * length))
    out = plane.reshape(n, c, hp, wp)[:, :, padding[0]:padding[0] + out_hw[0], padding[1]:padding[1] + out_hw[1]]
    return out if batched else out.squeeze(0)


# ---- embedding_bag ----------------------------------------------------------------------------------------

def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, averages or takes the maximum of the embeddings of each bag: the rows of a 2-D input, or the
    slices of a 1-D input that offsets start. Empty bags (and bags of padding_idx only) give zeros.
    Gathered as a [bags, longest bag, D] block so every reduction is one op."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: max_norm, scale_grad_by_freq and sparse are not supported by "
                                  "ember")
    if input.dtype not in (ember.int64, ember.int32):
        raise RuntimeError(f"embedding_bag: Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {input.dtype} instead")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) "
                             f"is not None, then it must have the same shape as the input ({list(input.shape)})")
    num_rows, dim = weight.shape
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None, as input is treated is a "
                             "mini-batch of fixed length sequences.")
        bags, width = input.shape
        starts = np.arange(bags, dtype=np.int64) * width
        ends = starts + width
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("embedding_bag: offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("embedding_bag: offsets has to be a 1D Tensor")
        starts = offsets.detach().cpu().numpy().astype(np.int64)
        total = input.shape[0]
        if include_last_offset:  # the last offset closes the last bag (which runs to the end, as in torch)
            starts = starts[:-1]
        ends = np.append(starts[1:], total)
        if starts.size and (starts[0] != 0 or np.any(np.diff(np.append(starts, ends[-1:])) < 0)
                            or ends[-1] > total):
            raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, start at 0 and stay within the input's "
                             f"{total} elements, got {offsets.tolist()}")
    else:
        raise ValueError(f"embedding_bag: input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    flat = input.reshape(-1).to(ember.int64)
    if flat.numel() and (bool((flat < 0).any()) or bool((flat >= num_rows).any())):
        raise RuntimeError(f"embedding_bag: an index of input is not in the valid range [0, {num_rows})")
    lengths = ends - starts
    bags = len(starts)
    longest = int(lengths.max()) if bags else 0
    # [bags, longest] positions into flat; the unused tail of short bags points at element 0, masked.
    pos = starts[:, None] + np.arange(longest)[None, :]
    valid_np = np.arange(longest)[None, :] < lengths[:, None]
    pos = np.where(valid_np, pos, 0).reshape(-1)
    device = weight.device
    if flat.numel() == 0:
        return ember.zeros(bags, dim, dtype=weight.dtype, device=device)
    idx = flat.index_select(0, ember.tensor(pos, device=device))
    valid = ember.tensor(valid_np.reshape(-1), device=device)
    if padding_idx is not None:
        padding_idx = padding_idx + num_rows if padding_idx < 0 else padding_idx
        valid = valid & (idx != padding_idx)
    rows = weight.index_select(0, idx)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1).index_select(0, ember.tensor(pos, device=device)).unsqueeze(1)
    rows = rows.reshape(bags, longest, dim)
    valid = valid.reshape(bags, longest, 1)
    if mode == "max":
        masked = ember.where(valid, rows, ember.full_like(rows, float("-inf")))
        best = masked.amax(1)
        return ember.where(valid.any(1), best, ember.zeros_like(best))
    total_rows = ember.where(valid, rows, ember.zeros_like(rows)).sum(1)
    if mode == "sum":
        return total_rows
    counts = valid.sum(1).to(weight.dtype)
    return total_rows / ember.clamp(counts, min=1.0)
