"""Top-level functions PyTorch scripts call that ember lacked, composed of
ember ops: the constants pi / e / inf / nan / newaxis, rsub, scalar_tensor,
trapezoid / trapz / cumulative_trapezoid, vander, unravel_index, histogram,
isin, and torch's top-level names for nn.functional operations
(torch.dropout(input, p, train), torch.layer_norm, torch.pdist, ...)."""
import collections
import math

import ember
from ember import _C
from ember._float_input import floating
from ember._tensor_api_extra import add_methods
from ember._tensor_api_math import wrap_dim

Tensor = _C.Tensor

CONSTANTS = dict(pi=math.pi, e=math.e, inf=math.inf, nan=math.nan, newaxis=None)


def rsub(input, other, *, alpha=1):
    """other - alpha * input."""
    return ember.sub(other, input, alpha=alpha) if isinstance(other, Tensor) else other - alpha * input


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A 0-d tensor holding s (in the default dtype unless dtype is given)."""
    out = ember.tensor(s, dtype=dtype or ember.get_default_dtype())
    if device is not None:
        out = out.to(device)
    return out.requires_grad_(requires_grad)


# ---- integration along a dim

def _spacing(op, y, x, dx, dim):
    """The widths between samples along dim (a number, or a tensor broadcasting against y's)."""
    if x is not None and dx is not None:
        raise TypeError(f"{op}(): pass x or dx, not both")
    if x is None:
        return 1.0 if dx is None else dx
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'x' must be Tensor, not {type(x).__name__}")
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{op}: There must be one `x` value for each sample point, got {x.shape[0]} for "
                               f"{y.shape[dim]} samples along dim {dim}")
        widths = x[1:] - x[:-1]
        shape = [1] * y.dim()
        shape[dim] = widths.shape[0]
        return widths.reshape(shape)
    n = x.shape[dim]
    return x.narrow(dim, 1, n - 1) - x.narrow(dim, 0, n - 1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim, with sample points x or spacing dx (default 1)."""
    y = floating(y, "trapezoid", complex_ok=True)
    if y.dim() == 0:
        raise IndexError(f"trapezoid: Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
    d = wrap_dim("trapezoid", dim, y.dim())
    n = y.shape[d]
    if n == 0:
        return y.sum(d) * 0
    width = _spacing("trapezoid", y, x, dx, d)
    pairs = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    return (pairs * width).sum(d) / 2


def trapz(y, x=None, *, dx=None, dim=-1):
    """trapezoid's older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along dim (one element fewer than y there)."""
    y = floating(y, "cumulative_trapezoid", complex_ok=True)
    if y.dim() == 0:
        raise IndexError(f"cumulative_trapezoid: Dimension out of range (expected to be in range of [-1, 0], "
                         f"but got {dim})")
    d = wrap_dim("cumulative_trapezoid", dim, y.dim())
    n = y.shape[d]
    if n == 0:
        return y
    width = _spacing("cumulative_trapezoid", y, x, dx, d)
    pairs = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    return ember.cumsum(pairs * width / 2, d)


# ---- array helpers

def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D x: columns x^(N-1), ..., x^0 (reversed when increasing)."""
    if x.dim() != 1:
        raise RuntimeError(f"vander: x must be a one-dimensional tensor, got {x.dim()}-D")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError(f"vander: N must be non-negative, got {n}")
    dtype = x.dtype if x.dtype != ember.bool else ember.int64
    if n == 0:
        return ember.empty((x.shape[0], 0), dtype=dtype, device=x.device)
    columns = [ember.ones(x.shape, dtype=dtype, device=x.device)]
    for _ in range(1, n):
        columns.append(columns[-1] * x.to(dtype))
    out = ember.stack(columns, 1)
    return out if increasing else out.flip([1])


def unravel_index(indices, shape):
    """The coordinates in a tensor of `shape` of flat (row-major) indices, one tensor per dim."""
    if not isinstance(indices, Tensor):
        indices = ember.tensor(indices)
    if indices.is_floating_point() or indices.dtype == ember.bool:
        raise TypeError(f"unravel_index: expected 'indices' to be an integer tensor, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"unravel_index: 'shape' cannot have negative values, but got {list(shape)}")
    total = math.prod(shape)
    if indices.numel() and (int(indices.min()) < -total or int(indices.max()) >= total):
        raise RuntimeError(f"unravel_index: index out of bounds for a tensor of shape {list(shape)}")
    rest = ember.where(indices < 0, indices + total, indices).to(ember.int64)
    coords = []
    for size in reversed(shape):
        coords.append(rest % size)
        rest = rest // size
    return tuple(reversed(coords))


_histogram_t = None


def histogram(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): counts (or summed weights) of input's values in
    `bins` equal bins over `range` (the data's range by default) or between
    the edges of a 1-D tensor `bins`; the last bin includes its right edge."""
    global _histogram_t
    if _histogram_t is None:
        _histogram_t = getattr(_C.return_types, "histogram", None) or collections.namedtuple(
            "histogram", ("hist", "bin_edges"))
        _histogram_t.__module__ = "ember.return_types"
        setattr(_C.return_types, "histogram", _histogram_t)
    if not input.is_floating_point():
        raise NotImplementedError(f"histogram: not implemented for {input.dtype}; it takes floating tensors")
    flat = input.reshape(-1).detach()
    if isinstance(bins, Tensor):
        edges = bins.to(input.dtype)
        if edges.dim() != 1 or edges.numel() < 2:
            raise RuntimeError("histogram: bins must be a 1-D tensor with at least 2 edges")
    else:
        if bins <= 0:
            raise RuntimeError(f"histogram: bins must be > 0, but got {bins}")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif flat.numel():
            lo, hi = float(flat.min()), float(flat.max())
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise ValueError(f"histogram: min should not exceed max, but got min {lo} max {hi}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5  # numpy's rule for an empty range
        edges = ember.linspace(lo, hi, bins + 1, dtype=input.dtype, device=input.device)
    n = edges.numel() - 1
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    position = ember.searchsorted(edges, flat, right=True) - 1
    position = position.clamp(0, n - 1)  # the right edge belongs to the last bin
    w = ember.ones_like(flat) if weight is None else weight.reshape(-1).to(input.dtype)
    w = ember.where(inside, w, ember.zeros_like(w))
    hist = ember.zeros(n, dtype=input.dtype, device=input.device).index_add(0, position, w)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return _histogram_t(hist, edges)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an element of `elements` occurs in `test_elements` (either may be a number)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): expected at least one of elements and test_elements to be a Tensor")
    device = (elements if isinstance(elements, Tensor) else test_elements).device
    if not isinstance(elements, Tensor):
        elements = ember.tensor(elements, device=device)
    tests = test_elements if isinstance(test_elements, Tensor) else ember.tensor(test_elements, device=device)
    dtype = ember.result_type(elements, tests)
    values, pool = elements.to(dtype).reshape(-1), tests.to(dtype).reshape(-1)
    if pool.numel() == 0:
        found = ember.zeros(values.shape, dtype=ember.bool, device=device)
    else:
        if pool.is_floating_point():  # NaN matches nothing, and the search would step past it
            pool = pool[~ember.isnan(pool)]
        pool = ember.sort(pool).values
        if pool.numel() == 0:
            found = ember.zeros(values.shape, dtype=ember.bool, device=device)
        else:
            position = ember.searchsorted(pool, values).clamp(max=pool.numel() - 1)
            found = pool[position] == values
    found = found.reshape(elements.shape)
    return ~found if invert else found


# ---- torch's top-level names for nn.functional operations

def _in_place(fn):
    """fn's in-place nn.functional call, returning the caller's tensor itself."""
    def function(input, *args, **kwargs):
        result = fn(input, *args, **kwargs)
        if result is not input:
            input.copy_(result)
        return input
    return function


def _nn_aliases():
    F = ember.nn.functional
    aliases = dict(
        dropout=lambda input, p, train: F.dropout(input, p, train),
        alpha_dropout=lambda input, p, train: F.alpha_dropout(input, p, train),
        feature_alpha_dropout=lambda input, p, train: F.feature_alpha_dropout(input, p, train),
        layer_norm=lambda input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True:
            F.layer_norm(input, normalized_shape, weight, bias, eps),
        group_norm=lambda input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True:
            F.group_norm(input, num_groups, weight, bias, eps),
        rms_norm=lambda input, normalized_shape, weight=None, eps=None:
            F.rms_norm(input, normalized_shape, weight, eps),
        pdist=lambda input, p=2: F.pdist(input, p),
        pixel_shuffle=lambda input, upscale_factor: F.pixel_shuffle(input, upscale_factor),
        pixel_unshuffle=lambda input, downscale_factor: F.pixel_unshuffle(input, downscale_factor),
        channel_shuffle=lambda input, groups: F.channel_shuffle(input, groups),
        celu=lambda input, alpha=1.0: F.celu(input, alpha),
        selu=lambda input: F.selu(input),
        threshold=lambda input, threshold, value: F.threshold(input, threshold, value),
        bilinear=lambda input1, input2, weight, bias=None: F.bilinear(input1, input2, weight, bias),
        is_inference=lambda input: input.is_inference(),
    )
    aliases.update(
        dropout_=_in_place(lambda input, p, train: F.dropout(input, p, train, True)),
        alpha_dropout_=_in_place(lambda input, p, train: F.alpha_dropout(input, p, train, True)),
        feature_alpha_dropout_=_in_place(lambda input, p, train: F.feature_alpha_dropout(input, p, train, True)),
        celu_=_in_place(lambda input, alpha=1.0: F.celu(input, alpha, True)),
        selu_=_in_place(lambda input: F.selu(input, True)),
        threshold_=_in_place(lambda input, threshold, value: F.threshold(input, threshold, value, True)),
        rrelu_=_in_place(lambda input, lower=0.125, upper=1.0 / 3, training=False, generator=None:
                         F.rrelu(input, lower, upper, training, True)),
    )
    for name, fn in aliases.items():
        fn.__name__ = name
        fn.__doc__ = f"torch.{name}: see ember.nn.functional.{name.rstrip('_')}."
    return {k: v for k, v in aliases.items() if k == "is_inference" or hasattr(F, k.rstrip("_"))}


def functions():
    out = dict(CONSTANTS)
    out.update(rsub=rsub, scalar_tensor=scalar_tensor, trapezoid=trapezoid, trapz=trapz,
               cumulative_trapezoid=cumulative_trapezoid, vander=vander, unravel_index=unravel_index,
               histogram=histogram, isin=isin)
    out.update(_nn_aliases())
    return out


add_methods(dict(histogram=histogram))
