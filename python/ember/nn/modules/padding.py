"""Padding modules (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad in 1-D, 2-D and
3-D): each holds its F.pad widths, (left, right[, top, bottom[, front, back]])."""
from ember.nn import functional as F
from ember.nn.modules.module import Module


def _widths(padding, n):
    # A tuple is taken as given (F.pad widths, as torch does), an int pads both sides of n dimensions.
    if isinstance(padding, (tuple, list)):
        return tuple(int(p) for p in padding)
    return (int(padding),) * (2 * n)


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _widths(padding, self._n)
        self.value = value

    def _check_input_dim(self, input):
        n = self._n
        if self._mode != "constant" and input.dim() not in (n + 1, n + 2):
            error = ValueError if self._mode == "circular" else NotImplementedError
            raise error(f"{type(self).__name__}: expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}, value={self.value}" if self._mode == "constant" else f"{self.padding}"


class ConstantPad1d(_PadNd):
    _n = 1

    def __init__(self, padding, value):
        super().__init__(padding, value)


class ConstantPad2d(ConstantPad1d):
    _n = 2


class ConstantPad3d(ConstantPad1d):
    _n = 3


class ZeroPad1d(_PadNd):
    _n = 1

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ZeroPad1d):
    _n = 2


class ZeroPad3d(ZeroPad1d):
    _n = 3


class ReflectionPad1d(_PadNd):
    _n = 1
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__(padding)


class ReflectionPad2d(ReflectionPad1d):
    _n = 2


class ReflectionPad3d(ReflectionPad1d):
    _n = 3


class ReplicationPad1d(ReflectionPad1d):
    _mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    _n = 2


class ReplicationPad3d(ReplicationPad1d):
    _n = 3


class CircularPad1d(ReflectionPad1d):
    _mode = "circular"


class CircularPad2d(CircularPad1d):
    _n = 2


class CircularPad3d(CircularPad1d):
    _n = 3
