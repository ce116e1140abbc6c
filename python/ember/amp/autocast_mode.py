"""ember.autocast: the context manager / decorator over the C++ autocast state.

The per-op casts happen in C++ (core/autocast.cpp holds the op lists); this
class only switches the thread-local state on and off and restores it, as
torch.autocast does.
"""
import functools
import warnings

import ember
from ember import _C

__all__ = ["autocast", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda")


def is_autocast_available(device_type):
    return device_type in _DEVICE_TYPES


class autocast:
    """Runs the ops of a region in mixed precision: ops on the lower-precision
    list (matmul, conv, linear...) in ``dtype``, ops on the float32 list
    (losses; on CUDA also softmax, norms, exp/log, sum) in float32.

    ``device_type``: "cuda" (default dtype float16) or "cpu" (bfloat16).
    Usable as ``with ember.autocast("cpu"):`` or as a decorator.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'; "
                f"ember supports {', '.join(repr(d) for d in _DEVICE_TYPES)}")
        self.device = device_type
        self.fast_dtype = _C.get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = _C.is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        enabled = bool(enabled)
        supported = (ember.bfloat16, ember.float16)
        if enabled and self.fast_dtype not in supported:
            warnings.warn(f"In {device_type} autocast, but the target dtype {self.fast_dtype} is not supported "
                          f"(use ember.bfloat16 or ember.float16). Disabling autocast.")
            enabled = False
        if enabled and device_type == "cuda" and not ember.cuda.is_available():
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _C.is_autocast_cache_enabled()
        self.prev = _C.is_autocast_enabled(self.device)
        self.prev_fastdtype = _C.get_autocast_dtype(self.device)
        _C.set_autocast_enabled(self.device, self._enabled)
        _C.set_autocast_dtype(self.device, self.fast_dtype)
        _C.autocast_increment_nesting()
        _C.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # Leaving the outermost region drops the cached casts of the parameters,
        # so the next iteration casts the updated weights again.
        if _C.autocast_decrement_nesting() == 0:
            _C.clear_autocast_cache()
        _C.set_autocast_enabled(self.device, self.prev)
        _C.set_autocast_dtype(self.device, self.prev_fastdtype)
        _C.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast
