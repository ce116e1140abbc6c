"""Order statistics and binning built from ember ops (sort, comparisons,
scatter): median, kthvalue, quantile, searchsorted, bucketize, bincount,
histc. They run on any device ember sorts on; median, kthvalue and quantile
are differentiable through sort's values."""
import collections
import math
import operator

import ember
from ember import _C

Tensor = _C.Tensor


def _return_type(name):
    existing = getattr(_C.return_types, name, None)
    if existing is not None:
        return existing
    cls = collections.namedtuple(name, ("values", "indices"))
    cls.__module__ = "ember.return_types"
    setattr(_C.return_types, name, cls)
    return cls


_median_t = _return_type("median")
_kthvalue_t = _return_type("kthvalue")


def _pick(input, dim, k, keepdim, cls, nan_wins=False):
    """The k-th smallest (0-based) along dim, with its index; with nan_wins a
    slice holding NaN gives NaN and the first NaN's index (median's rule)."""
    values, indices = ember.sort(input, dim=dim, stable=True)
    v = values.narrow(dim, k, 1)
    i = indices.narrow(dim, k, 1)
    if nan_wins and input.is_floating_point():
        nan = ember.isnan(input)
        has_nan = nan.any(dim, keepdim=True)
        v = ember.where(has_nan, ember.full_like(v, float("nan")), v)
        i = ember.where(has_nan, nan.to(ember.int64).argmax(dim, keepdim=True), i)
    if not keepdim:
        v, i = v.squeeze(dim), i.squeeze(dim)
    return cls(v, i)


def median(input, dim=None, keepdim=False):
    """The lower median (as torch): of all elements, or (values, indices) along dim."""
    if dim is None:
        flat = input.reshape(-1)
        if flat.numel() == 0:
            return ember.full((), float("nan"), dtype=input.dtype, device=input.device)
        if flat.is_floating_point() and bool(ember.isnan(flat).any()):
            return ember.full((), float("nan"), dtype=input.dtype, device=input.device)
        return ember.sort(flat, stable=True).values[(flat.numel() - 1) // 2]
    n = input.shape[dim] if input.dim() else 1
    if n == 0:
        raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
    return _pick(input if input.dim() else input.reshape(1), dim, (n - 1) // 2, keepdim, _median_t, nan_wins=True)


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element along dim (k from 1), with its index."""
    x = input if input.dim() else input.reshape(1)
    n = x.shape[dim]
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim} (k = {k}, size {n})")
    return _pick(x, dim, k - 1, keepdim, _kthvalue_t)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles (q a number or a 1-D tensor in [0, 1]) of all
    elements or along dim; a tensor q adds a leading dim, as in torch."""
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                         f"Got {interpolation}")
    if not input.is_floating_point():
        raise RuntimeError(f"quantile() input tensor must be either float or double dtype, got {input.dtype}")
    scalar_q = not isinstance(q, Tensor)
    qs = [float(q)] if scalar_q else [float(v) for v in q.reshape(-1).tolist()]
    if any(not 0 <= v <= 1 for v in qs):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else dim
    values = ember.sort(x, dim=d).values
    n = values.shape[d]
    if n == 0:
        raise IndexError("quantile() input tensor must be non-empty")
    # A slice holding NaN has NaN quantiles (sort put the NaNs last).
    values = ember.where(ember.isnan(values).any(d, keepdim=True), ember.full_like(values, float("nan")), values)
    outs = []
    for v in qs:
        pos = v * (n - 1)
        lo = int(pos // 1)
        frac = pos - lo
        hi = min(lo + 1, n - 1) if frac > 0 else lo  # floor and ceil of the position
        if interpolation == "lower" or (interpolation == "nearest" and (frac < 0.5 or (frac == 0.5 and lo % 2 == 0))):
            out = values.narrow(d, lo, 1)
        elif interpolation in ("higher", "nearest"):
            out = values.narrow(d, hi, 1)
        else:
            w = 0.5 if interpolation == "midpoint" else frac
            out = values.narrow(d, lo, 1) * (1 - w) + values.narrow(d, hi, 1) * w
        if dim is None:
            out = out.reshape(()) if not keepdim else out.reshape([1] * input.dim())
        elif not keepdim:
            out = out.squeeze(d)
        outs.append(out)
    return outs[0] if scalar_q else ember.stack(outs)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """For each value, the index where it would go in the sorted last dim of
    sorted_sequence (before equal elements, or after them with right=True).
    On the CPU a binary search per value (C++); elsewhere the same bisection
    for all values at once, one gather per halving step (ember ops)."""
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        seq = seq.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    values = ember.tensor(input, device=seq.device) if scalar else input  # compared in the promoted dtype
    if seq.dim() > 1 and tuple(seq.shape[:-1]) != tuple(values.shape[:-1]):
        raise RuntimeError(f"searchsorted: boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                           f"boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(seq.shape)} and input value tensor {list(values.shape)}")
    dtype = ember.int32 if out_int32 else ember.int64
    if seq.device.type == "cpu" and values.device.type == "cpu":
        return _C._searchsorted(seq, values, right).to(dtype)
    return _bisect(seq, values, right).to(dtype)


def _bisect(seq, values, right):
    """The CPU's bisection step for step (same midpoints), so that rows holding
    NaN, which break the order, give the CPU's (and PyTorch's) answers."""
    n = seq.shape[-1]
    if seq.dim() > 1:  # one row of values per row of seq
        rows = seq.reshape(math.prod(seq.shape[:-1]), n)
        v = values.reshape(rows.shape[0], values.shape[-1])
    else:
        rows, v = seq.reshape(1, n), values.reshape(1, values.numel())
    lo = ember.zeros(v.shape, dtype=ember.int64, device=v.device)
    hi = ember.full(v.shape, n, dtype=ember.int64, device=v.device)
    for _ in range(n.bit_length()):  # each step halves every [lo, hi); n.bit_length() steps empty them
        mid = (lo + hi) // 2
        y = rows.gather(-1, mid.clamp(max=max(n - 1, 0)))
        passed = ~(y > v) if right else ~(y >= v)  # NaN in the row is passed, as in the CPU's search
        active = lo < hi
        lo = ember.where(active & passed, mid + 1, lo)
        hi = ember.where(active & ~passed, mid, hi)
    return lo.reshape(values.shape)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value among 1-D boundaries (torch's convention for right)."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input, weights=None, minlength=0):
    """How often each non-negative integer occurs in a 1-D tensor (summing
    weights instead of ones when given)."""
    if input.dim() != 1 or input.is_floating_point() or input.dtype == ember.bool:
        raise RuntimeError("bincount: only 1-d non-negative integral inputs are supported")
    if minlength < 0:
        raise RuntimeError("bincount: minlength should be >= 0")
    if input.numel() and int(input.min()) < 0:
        raise RuntimeError("bincount: input must contain only non-negative values")
    size = max(int(input.max()) + 1 if input.numel() else 0, minlength)
    if weights is None:
        src = ember.ones(input.shape, dtype=ember.int64, device=input.device)
        dtype = ember.int64
    else:  # float weights keep their dtype; integer weights count in float64, as in torch
        dtype = weights.dtype if weights.is_floating_point() else ember.float64
        src = weights.to(dtype)
    return ember.zeros(size, dtype=dtype, device=input.device).index_add(0, input.long(), src)


def histc(input, bins=100, min=0, max=0):
    """A histogram of `bins` equal bins between min and max (the data's range
    when both are 0); values outside are ignored, max falls in the last bin."""
    if not input.is_floating_point():
        raise RuntimeError(f"histc: expected a floating point tensor, got {input.dtype}")
    try:
        bins = operator.index(bins)
    except TypeError:
        raise TypeError(f"histc: bins must be an int, got {type(bins).__name__}") from None
    if bins <= 0:
        raise RuntimeError("histc: bins must be > 0")
    lo, hi = float(min), float(max)
    flat = input.reshape(-1)
    if lo == 0 and hi == 0 and flat.numel():
        lo, hi = (float(v) for v in ember.aminmax(flat))
    if lo > hi:
        raise RuntimeError(f"histc: max must be larger than min, got min {lo} and max {hi}")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    # Every value gets a bin; those outside [min, max] (and NaN) count 0 there: no compaction pass.
    keep = (flat >= lo) & (flat <= hi)
    position = ((flat - lo) * (bins / (hi - lo))).floor()
    index = ember.where(keep, position, ember.zeros_like(position)).clamp(max=bins - 1).long()
    return ember.zeros(bins, dtype=input.dtype, device=input.device).index_add(0, index, keep.to(input.dtype))


Tensor.median = median
Tensor.kthvalue = kthvalue
Tensor.quantile = quantile
Tensor.bincount = bincount
Tensor.histc = histc
