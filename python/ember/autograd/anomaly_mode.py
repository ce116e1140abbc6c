"""Anomaly detection for autograd, as torch.autograd.detect_anomaly.

While it is on, every op that records a graph node keeps the Python traceback
of its forward call; when that node's backward raises, a warning prints the
traceback, and with check_nan a backward that produces NaN raises
RuntimeError("Function 'MulBackward0' returned nan values in its 0th
output.") followed by that traceback. The mode is process-wide, as in torch.
"""
import functools
import warnings

from ember import _C

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

is_anomaly_enabled = _C.is_anomaly_enabled
is_anomaly_check_nan_enabled = _C.is_anomaly_check_nan_enabled


class detect_anomaly:
    """Context manager (and decorator) that turns anomaly detection on in
    its block and restores the previous setting after. It slows everything
    down: use it only to find where a NaN or a backward error comes from."""

    def __init__(self, check_nan=True):
        self.check_nan = bool(check_nan)
        self._saved = []
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._saved.append((_C.is_anomaly_enabled(), _C.is_anomaly_check_nan_enabled()))
        _C._set_anomaly_enabled(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(*self._saved.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turns anomaly detection on or off right away (a plain call), or for a
    block when used as a context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_C.is_anomaly_enabled(), _C.is_anomaly_check_nan_enabled())
        _C._set_anomaly_enabled(bool(mode), bool(check_nan))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(*self.prev)
        return False
