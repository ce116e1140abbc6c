"""ember.cuda: GPU devices, streams, events and memory, as torch.cuda.

The answers come from the C++ core (ember._C._cuda). Without a usable GPU,
is_available() is False (with a warning that says why when ember was built
with CUDA), counters such as memory_allocated() are 0, and calls that need a
GPU raise RuntimeError("ember.cuda: no CUDA GPU is available: <reason>").
"""
import contextlib
import sys as _sys
import warnings

from ember import _C
from ember._C import OutOfMemoryError  # noqa: F401  (torch.cuda.OutOfMemoryError)

_cuda = _C._cuda

__all__ = [
    "is_available", "device_count", "current_device", "set_device", "device", "get_device_name",
    "get_device_capability", "get_device_properties", "get_arch_list", "synchronize", "manual_seed",
    "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
    "get_rng_state_all", "set_rng_state_all", "Stream", "Event", "stream", "current_stream", "default_stream", "set_stream",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "reset_peak_memory_stats", "empty_cache", "memory_summary", "memory_stats", "mem_get_info",
    "OutOfMemoryError",
]

_warned_unavailable = False


def _built_with_cuda():
    return _C._build_info()["cuda"] == "ON"


def is_available():
    """True when ember was built with CUDA and a usable GPU is present."""
    global _warned_unavailable
    ok = _cuda.is_available()
    if not ok and _built_with_cuda() and not _warned_unavailable:
        _warned_unavailable = True
        warnings.warn(f"ember.cuda: CUDA cannot be used: {_cuda.unavailable_reason()}", UserWarning,
                      stacklevel=2)
    return ok


def device_count():
    """Number of CUDA devices ember can use (0 without a usable GPU)."""
    return _cuda.device_count()


def _require():
    if not _cuda.is_available():
        raise RuntimeError(f"ember.cuda: no CUDA GPU is available: {_cuda.unavailable_reason()}")


def _index(device, optional=True):
    """-1 (the current device) for None; the CUDA ordinal for an int, a
    'cuda:N' string or an ember.device."""
    if device is None:
        return -1
    if isinstance(device, bool):
        raise TypeError(f"expected a CUDA device or an index, got {device!r}")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return -1 if device.index is None else device.index
    raise TypeError(f"expected a CUDA device such as 'cuda:0' or an index, got {device!r}")


def current_device():
    """Index of the current CUDA device."""
    _require()
    return _cuda.current_device()


def set_device(device):
    """Makes `device` the current CUDA device (a negative index is a no-op, as in torch)."""
    index = _index(device)
    if index < 0:
        return
    _require()
    _cuda.set_device(index)


class device:
    """Context manager that makes `device` current and restores the previous one."""

    def __init__(self, device):
        self.idx = _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            _require()
            self.prev_idx = _cuda.current_device()
            if self.prev_idx != self.idx:
                _cuda.set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _cuda.set_device(self.prev_idx)
        return False


def get_device_properties(device=None):
    """name, total_memory, major, minor, multi_processor_count of a GPU."""
    _require()
    return _cuda.get_device_properties(_index(device))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    """(major, minor) compute capability of a GPU."""
    p = get_device_properties(device)
    return (p.major, p.minor)


def get_arch_list():
    """The GPU architectures this build has code for, e.g. ['sm_90', 'compute_90']."""
    archs = _C._build_info()["cuda_archs"]
    return [a for a in archs.split(";") if a]


def synchronize(device=None):
    """Waits for all work queued on the device."""
    _require()
    _cuda.synchronize(_index(device))


def _seed(seed):
    return int(seed) & 0xFFFF_FFFF_FFFF_FFFF


def manual_seed(seed):
    """Seeds the random number generator of the current GPU (silently does
    nothing useful without one, as in torch)."""
    index = _cuda.current_device() if _cuda.is_available() else 0
    _cuda.manual_seed(_seed(seed), index)


def manual_seed_all(seed):
    """Seeds the random number generators of every GPU."""
    for i in range(max(1, _cuda.device_count())):
        _cuda.manual_seed(_seed(seed), i)


def _generator_index(device):
    # Without a GPU, as in torch, the state of device 0's generator still exists.
    index = _index(device)
    if index == -1:
        index = _cuda.current_device() if _cuda.is_available() else 0
    return index


def get_rng_state(device="cuda"):
    """The random number generator state of a GPU, as a uint8 tensor on the CPU."""
    return _cuda.get_rng_state(_generator_index(device))


def set_rng_state(new_state, device="cuda"):
    """Restores a GPU's generator from a state get_rng_state returned."""
    _cuda.set_rng_state(new_state, _generator_index(device))


def get_rng_state_all():
    return [_cuda.get_rng_state(i) for i in range(max(1, _cuda.device_count()))]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        _cuda.set_rng_state(state, i)


def seed():
    """Seeds the current GPU's generator from a random number."""
    _cuda.seed(_generator_index(None))


def seed_all():
    s = _cuda.seed(0)
    for i in range(1, max(1, _cuda.device_count())):
        _cuda.manual_seed(s, i)


def initial_seed():
    return _cuda.initial_seed(_generator_index(None))


# ---- streams and events

class Stream:
    """A CUDA stream of a device (from the device's stream pool). priority < 0
    asks for a high-priority stream."""

    def __init__(self, device=None, priority=0, _handle=None):
        if _handle is None:
            _require()
            _handle = _cuda.new_stream(_index(device), priority < 0)
        self._s = _handle

    @property
    def device(self):
        return _C.device(f"cuda:{self._s.device_index}")

    @property
    def cuda_stream(self):
        return self._s.cuda_stream

    def synchronize(self):
        _cuda.stream_synchronize(self._s)

    def query(self):
        return _cuda.stream_query(self._s)

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        event.wait(self)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def __eq__(self, other):
        return isinstance(other, Stream) and self._s == other._s

    def __hash__(self):
        return hash(self._s)

    def __repr__(self):
        return f"<ember.cuda.Stream device=cuda:{self._s.device_index} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: record it on a stream, wait for it, time between two."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError("ember.cuda.Event: interprocess events are not supported")
        self._e = _cuda._Event(enable_timing, blocking)

    def record(self, stream=None):
        self._e.record((stream or current_stream())._s)

    def wait(self, stream=None):
        self._e.wait((stream or current_stream())._s)

    def query(self):
        return self._e.query()

    def synchronize(self):
        self._e.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and end_event."""
        return self._e.elapsed_time(end_event._e)

    def __repr__(self):
        return f"<ember.cuda.Event recorded={self._e.recorded}>"


def current_stream(device=None):
    """The stream work on `device` is queued on."""
    _require()
    return Stream(_handle=_cuda.current_stream(_index(device)))


def default_stream(device=None):
    _require()
    return Stream(_handle=_cuda.default_stream(_index(device)))


def set_stream(stream):
    """Makes `stream` the current stream of its device."""
    if stream is None:
        return
    _cuda.set_current_stream(stream._s)


@contextlib.contextmanager
def stream(stream):
    """Queues the work inside the block on `stream` (None: no change), on its
    device, and restores the previous current stream and device after."""
    if stream is None:
        yield
        return
    with device(stream._s.device_index):
        previous = _cuda.current_stream(stream._s.device_index)
        _cuda.set_current_stream(stream._s)
        try:
            yield
        finally:
            _cuda.set_current_stream(previous)


# ---- memory (the caching allocator's counters; 0 before a GPU is used)

def memory_stats(device=None):
    """The allocator's counters of a device, as a dict."""
    if not _cuda.is_available():
        return {}
    return dict(_cuda.memory_stats(_index(device)))


def _stat(device, key):
    return memory_stats(device).get(key, 0)


def memory_allocated(device=None):
    """Bytes held by tensors on the device."""
    return _stat(device, "allocated_bytes")


def max_memory_allocated(device=None):
    """Peak of memory_allocated() since the start or reset_peak_memory_stats()."""
    return _stat(device, "peak_allocated_bytes")


def memory_reserved(device=None):
    """Bytes obtained from the GPU by the caching allocator (allocated + cached)."""
    return _stat(device, "reserved_bytes")


def max_memory_reserved(device=None):
    return _stat(device, "peak_reserved_bytes")


def reset_peak_memory_stats(device=None):
    if _cuda.is_available():
        _cuda.reset_peak_memory_stats(_index(device))


reset_max_memory_allocated = reset_peak_memory_stats


def empty_cache():
    """Returns the cached, unused GPU memory to the device (tensors keep theirs)."""
    _cuda.empty_cache()


def memory_summary(device=None, abbreviated=False):
    """A table of the allocator's counters for a device."""
    _require()
    return _cuda.memory_summary(_index(device))


def mem_get_info(device=None):
    """(free, total) bytes of the GPU, as cudaMemGetInfo reports them."""
    _require()
    return _cuda.mem_get_info(_index(device))


# ember.cuda.amp: torch.cuda.amp's deprecated autocast / GradScaler spellings.
from ember.amp import _cuda_compat as amp  # noqa: E402

_sys.modules[__name__ + ".amp"] = amp


# ---- extras scripts use: capability checks, initialization, deprecated
# memory names, nested stats, the per-process memory fraction, NVTX.

__all__ += ["is_bf16_supported", "is_tf32_supported", "init", "is_initialized", "ipc_collect", "memory_cached",
            "max_memory_cached", "reset_max_memory_cached", "memory_stats_as_nested_dict",
            "reset_accumulated_memory_stats", "set_per_process_memory_fraction",
            "get_per_process_memory_fraction", "nvtx"]

_initialized = False


def is_bf16_supported(including_emulation=True):
    """True when the current GPU computes in bfloat16 natively (compute
    capability 8.0 or newer); False without a usable GPU. ember does not
    emulate bfloat16 on older GPUs, so including_emulation changes nothing."""
    if not _cuda.is_available():
        return False
    return get_device_capability()[0] >= 8


def is_tf32_supported():
    """True when the current GPU has TF32 tensor cores (compute capability 8.0 or newer)."""
    if not _cuda.is_available():
        return False
    return get_device_capability()[0] >= 8


def init():
    """Initializes the current GPU now instead of at its first use (raises
    RuntimeError without a usable GPU)."""
    global _initialized
    _require()
    _cuda.synchronize(-1)  # creates the device's context
    _initialized = True


def is_initialized():
    """Whether init() ran or a GPU's memory has been used (ember creates a
    device's context at its first use)."""
    if _initialized:
        return True
    return _cuda.is_available() and any(dict(_cuda.memory_stats(i))["num_device_alloc"] > 0
                                        for i in range(_cuda.device_count()))


def ipc_collect():
    """No-op: ember does not share GPU memory between processes (CUDA IPC),
    so there is nothing to collect."""


def memory_cached(device=None):
    """Deprecated: memory_reserved()."""
    warnings.warn("ember.cuda.memory_cached has been renamed to ember.cuda.memory_reserved", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    """Deprecated: max_memory_reserved()."""
    warnings.warn("ember.cuda.max_memory_cached has been renamed to ember.cuda.max_memory_reserved",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_max_memory_cached(device=None):
    """Deprecated: reset_peak_memory_stats()."""
    warnings.warn("ember.cuda.reset_max_memory_cached now calls ember.cuda.reset_peak_memory_stats, which resets "
                  "all peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


# Counters that only grow; reset_accumulated_memory_stats() makes them count
# from the call on (a baseline per device, subtracted by memory_stats()).
_ACCUMULATED = ("num_device_alloc", "num_device_free", "num_cache_flushes", "num_alloc_retries", "num_ooms")
_accumulated_baseline = {}

_raw_memory_stats = memory_stats


def memory_stats(device=None):  # noqa: F811  (the counters above, from their last reset)
    """The allocator's counters of a device, as a dict: ember's own names
    and torch's dotted ones (allocated_bytes.all.current, ...)."""
    stats = _raw_memory_stats(device)
    baseline = _accumulated_baseline.get(_stats_key(device))
    if stats and baseline:
        for key in _ACCUMULATED:
            if key in stats:
                stats[key] -= baseline.get(key, 0)
    return stats


def _stats_key(device):
    index = _index(device)
    if index < 0 and _cuda.is_available():
        index = _cuda.current_device()
    return index


def reset_accumulated_memory_stats(device=None):
    """Restarts the counters that only grow (cudaMalloc/cudaFree calls, cache
    flushes, out-of-memory errors) from 0."""
    raw = _raw_memory_stats(device)
    if raw:
        _accumulated_baseline[_stats_key(device)] = {k: raw[k] for k in _ACCUMULATED if k in raw}


def memory_stats_as_nested_dict(device=None):
    """memory_stats() with torch's dotted keys nested: stats["allocated_bytes"]["all"]["current"]."""
    nested = {}
    flat = memory_stats(device)
    for key, value in flat.items():
        if "." not in key:
            continue
        parts = key.split(".")
        node = nested
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    for key, value in flat.items():
        if "." not in key and key not in nested:
            nested[key] = value
    return nested


def set_per_process_memory_fraction(fraction, device=None):
    """Caps what ember's caching allocator may reserve on a device at
    fraction * its total memory; allocations beyond raise OutOfMemoryError
    naming the fraction (after the allocator released its cache)."""
    if not isinstance(fraction, float):
        raise TypeError("set_per_process_memory_fraction: invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"set_per_process_memory_fraction: invalid fraction value: {fraction}. Allowed range: 0~1")
    _require()
    _cuda.set_per_process_memory_fraction(fraction, _index(device))


def get_per_process_memory_fraction(device=None):
    """The fraction set by set_per_process_memory_fraction (1.0 when none was)."""
    _require()
    return _cuda.get_per_process_memory_fraction(_index(device))


from ember import _cuda_nvtx as nvtx  # noqa: E402

_sys.modules[__name__ + ".nvtx"] = nvtx
