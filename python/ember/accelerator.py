"""ember.accelerator: the device-agnostic accelerator API of torch 2.6+
(torch.accelerator), over ember.cuda, ember's only accelerator.

``current_accelerator()`` is device("cuda") when ember was built with CUDA
(None otherwise), whether or not a GPU is present, as torch; pass
``check_available=True`` to get None without a usable GPU. Calls that need a
GPU (current_device_index, synchronize, ...) raise RuntimeError without one.
"""
import warnings as _warnings

from ember import _C
from ember import cuda as _cuda_api

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize", "device_index", "current_stream", "set_stream", "empty_cache", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "memory_stats", "reset_accumulated_memory_stats", "get_memory_info"]


def _built_with_cuda():
    return _C._build_info().get("cuda") == "ON"


def is_available():
    """Whether a usable GPU is present (without ember.cuda.is_available()'s warning)."""
    return _built_with_cuda() and _C._cuda.is_available()


def current_accelerator(check_available=False):
    """device("cuda") if ember was built with CUDA, else None; with check_available, None
    also when no GPU can be used."""
    if not _built_with_cuda() or (check_available and not is_available()):
        return None
    return _C.device("cuda")


def device_count():
    """Number of GPUs ember can use (0 without one)."""
    return _cuda_api.device_count()


def _index(device, optional):
    if device is None:
        if not optional:
            raise ValueError("ember.accelerator: expected a device with an index or an int, got None")
        return -1
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device) and device.type != "cuda":
        raise ValueError(f"{device.type} doesn't match the current accelerator cuda.")
    return _cuda_api._index(device)


def current_device_index():
    """Index of the current GPU."""
    return _cuda_api.current_device()


def set_device_index(device, /):
    """Makes `device` (an index, "cuda:N" or a device) the current GPU; a negative index does nothing."""
    _cuda_api.set_device(_index(device, optional=False))


def current_device_idx():
    """Deprecated spelling of current_device_index()."""
    _warnings.warn("current_device_idx is deprecated, use current_device_index instead", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device, /):
    """Deprecated spelling of set_device_index()."""
    _warnings.warn("set_device_idx is deprecated, use set_device_index instead", FutureWarning, stacklevel=2)
    set_device_index(device)


def synchronize(device=None, /):
    """Waits for all work queued on the GPU (the current one when device is None)."""
    _cuda_api.synchronize(_index(device, optional=True))


class device_index:
    """`with ember.accelerator.device_index(i):` makes GPU i current inside the block and
    restores the previous one after; None does nothing."""

    def __init__(self, device, /):
        self.idx = device
        self._inner = None

    def __enter__(self):
        if self.idx is not None:
            self._inner = _cuda_api.device(self.idx)
            self._inner.__enter__()

    def __exit__(self, *exc):
        if self._inner is not None:
            self._inner.__exit__(*exc)
            self._inner = None
        return False


def current_stream(device=None, /):
    """The current stream of the GPU."""
    return _cuda_api.current_stream(_index(device, optional=True))


def set_stream(stream):
    """Makes `stream` the current stream of its GPU."""
    _cuda_api.set_stream(stream)


def empty_cache():
    """Returns the GPU memory ember's caching allocator holds but does not use."""
    _cuda_api.empty_cache()


def memory_allocated(device_index=None, /):
    return _cuda_api.memory_allocated(device_index)


def max_memory_allocated(device_index=None, /):
    return _cuda_api.max_memory_allocated(device_index)


def memory_reserved(device_index=None, /):
    return _cuda_api.memory_reserved(device_index)


def max_memory_reserved(device_index=None, /):
    return _cuda_api.max_memory_reserved(device_index)


def reset_peak_memory_stats(device_index=None, /):
    _cuda_api.reset_peak_memory_stats(device_index)


def memory_stats(device_index=None, /):
    return _cuda_api.memory_stats(device_index)


def reset_accumulated_memory_stats(device_index=None, /):
    _cuda_api.reset_accumulated_memory_stats(device_index)


def get_memory_info(device_index=None, /):
    """(free, total) bytes of the GPU."""
    return _cuda_api.mem_get_info(device_index)
