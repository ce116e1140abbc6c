"""make_tensor: a random tensor for tests, as torch.testing.make_tensor."""
import math

from ember import _C
from ember._dtype_info import finfo, iinfo

# [low, high) drawn from when neither bound is given, by kind of dtype.
_DEFAULT_RANGES = {"bool": (0, 2), "uint8": (0, 10), "int": (-9, 10), "float": (-9, 9)}


def _dtype_range(dtype):
    """The [min, max) interval a dtype can hold (max exclusive for integers)."""
    if dtype == _C.bool:
        return 0, 2
    if dtype.is_floating_point:
        info = finfo(dtype)
        return info.min, info.max
    info = iinfo(dtype)
    return info.min, info.max + 1


def _bounds(dtype, low, high):
    """Resolves low/high: defaults, clamped into the dtype's range, integers
    rounded up (ceil) as torch does; checks the interval is valid."""
    kind = "bool" if dtype == _C.bool else "uint8" if dtype == _C.uint8 else \
        "float" if dtype.is_floating_point else "int"
    default_low, default_high = _DEFAULT_RANGES[kind]
    for value in (low, high):
        if value is not None and isinstance(value, float) and math.isnan(value):
            raise ValueError(f"make_tensor: `low` and `high` cannot be NaN, but got low={low} and high={high}")
    low = default_low if low is None else low
    high = default_high if high is None else high
    lowest, highest = _dtype_range(dtype)
    if kind == "float":
        low, high = max(low, lowest), min(high, highest)
        if low > high:
            raise ValueError(f"make_tensor: `low` must be less than or equal to `high`, but got {low} > {high}")
        return float(low), float(high)
    if low >= high:
        raise ValueError(f"make_tensor: `low` must be less than `high`, but got {low} >= {high}")
    if high <= lowest or low >= highest:
        raise ValueError(f"make_tensor: the value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    return max(math.ceil(low), lowest), min(math.ceil(high), highest)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of `shape` filled with values drawn uniformly from [low, high)
    (integer dtypes: integers in [ceil(low), ceil(high))). Defaults: [-9, 9)
    for floating dtypes, [-9, 10) for integers, [0, 10) for uint8, {False,
    True} for bool. exclude_zero replaces zeros (by 1 for integers, by the
    dtype's smallest normal number for floats); noncontiguous gives a tensor
    with the same values whose last dimension is strided."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
    if requires_grad and not dtype.is_floating_point:
        raise ValueError("make_tensor: `requires_grad=True` is not supported for boolean and integral dtypes, "
                         f"but got dtype={dtype}")
    if noncontiguous and memory_format is not None:
        raise ValueError("make_tensor: the parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and memory_format={memory_format}")
    low, high = _bounds(dtype, low, high)
    if dtype.is_floating_point:
        # Drawn in float64 so that a wide interval such as the whole float32
        # range does not overflow in high - low.
        u = _C.rand(shape, dtype=_C.float64, device=device)
        result = (u * (high / 2 - low / 2) * 2 + low).clamp(low, high).to(dtype)
    else:
        # randint's bound must itself fit in int64: the whole int64 range
        # gives up its largest value.
        high = min(high, 2**63 - 1)
        result = _C.randint(low, high, shape, dtype=_C.int64, device=device).to(dtype)
    if exclude_zero:
        if dtype == _C.bool:
            replacement = True
        elif dtype.is_floating_point:
            replacement = finfo(dtype).tiny
        else:
            replacement = 1
        result = _C.where(result == 0, _C.full_like(result, replacement), result)
    if noncontiguous and result.numel() > 1:
        # The values at every other element of a buffer twice as long in the last dimension.
        buffer = _C.empty(shape[:-1] + (2 * shape[-1],), dtype=dtype, device=device)
        strided = buffer[..., ::2]
        strided.copy_(result)
        result = strided
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result
