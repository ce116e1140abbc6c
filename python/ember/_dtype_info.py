"""ember.finfo / ember.iinfo: the numerical limits of a dtype, with the values
torch.finfo / torch.iinfo report (numpy's for the IEEE types, bfloat16's by
its format: 8 exponent bits like float32, 7 fraction bits)."""
import numpy as np

from ember import _C

_BFLOAT16 = dict(bits=16, eps=2.0 ** -7, max=(2.0 - 2.0 ** -7) * 2.0 ** 127, tiny=2.0 ** -126, resolution=0.01)


def _name(dtype):
    return repr(dtype).split(".", 1)[-1]


def _check_dtype(dtype, who):
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"{who}: expected an ember dtype (e.g. ember.float32), got {type(dtype).__name__}")


class finfo:
    """Limits of a floating dtype: bits, eps, max, min, tiny (= smallest_normal),
    resolution and dtype (its name), as torch.finfo."""

    def __init__(self, type=None):
        dtype = _C.get_default_dtype() if type is None else type
        _check_dtype(dtype, "finfo")
        if not dtype.is_floating_point:
            raise TypeError(f"finfo: {dtype!r} is not a floating point dtype; use ember.iinfo for integer dtypes")
        if dtype == _C.bfloat16:
            values = _BFLOAT16
        else:
            info = np.finfo(_name(dtype))
            # resolution as 10 ** -precision in Python floats (numpy's is a rounded float32 for float32).
            values = dict(bits=info.bits, eps=float(info.eps), max=float(info.max), tiny=float(info.tiny),
                          resolution=10.0 ** -info.precision)
        self.bits = int(values["bits"])
        self.eps = values["eps"]
        self.max = values["max"]
        self.min = -values["max"]
        self.tiny = values["tiny"]
        self.smallest_normal = values["tiny"]
        self.resolution = values["resolution"]
        self.dtype = _name(dtype)

    def _key(self):
        return (self.bits, self.eps, self.max, self.min, self.tiny, self.resolution, self.dtype)

    def __eq__(self, other):
        return isinstance(other, finfo) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype: bits, max, min and dtype (its name), as torch.iinfo."""

    def __init__(self, type):
        _check_dtype(type, "iinfo")
        if type == _C.bool:
            raise TypeError("iinfo: ember.bool is not supported by ember.iinfo")
        if type.is_floating_point:
            raise TypeError(f"iinfo: {type!r} is not an integer dtype; use ember.finfo for floating point dtypes")
        info = np.iinfo(_name(type))
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = _name(type)

    def __eq__(self, other):
        return isinstance(other, iinfo) and (self.bits, self.min, self.max, self.dtype) == (
            other.bits, other.min, other.max, other.dtype)

    def __hash__(self):
        return hash((self.bits, self.min, self.max, self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
