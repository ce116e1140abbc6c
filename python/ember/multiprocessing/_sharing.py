"""Sharing strategies and Tensor.share_memory_, as torch.multiprocessing has them.

share_memory_() moves a CPU tensor's data into a memfd-backed shared mapping: a new
storage over that memory is made (numpy over mmap, then ember.from_numpy, which shares)
and swapped in with `tensor.data = ...`, so the Python object, its Parameter-ness and
autograd identity stay. Forked children inherit the mapping; spawned children and
multiprocessing queues get the tensor pickled as the memfd (passed as a file
descriptor, multiprocessing.reduction.DupFd) plus shape and strides, so every process
sees the others' in-place updates: Hogwild training works. bfloat16 (no numpy dtype)
and CUDA tensors are left as they are. The sharing strategy is recorded for torch
compatibility and changes nothing (file descriptors are always used).
"""
import os
import sys
import weakref

from ember import _C

_STRATEGIES = {"file_descriptor", "file_system"} if sys.platform != "darwin" else {"file_system"}
_strategy = "file_system" if sys.platform == "darwin" else "file_descriptor"


def get_all_sharing_strategies():
    """The strategy names torch accepts on this platform (a set)."""
    return set(_STRATEGIES)


def get_sharing_strategy():
    return _strategy


def set_sharing_strategy(new_strategy):
    """Records the strategy; ember pickles tensors by value whichever is chosen."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f"set_sharing_strategy: unknown strategy {new_strategy!r}; "
                             f"expected one of {sorted(_STRATEGIES)}")
    _strategy = new_strategy


# ember dtype name -> numpy dtype of the shared buffer (bfloat16 has none: left unshared)
_NUMPY_DTYPES = {"float32": "float32", "float64": "float64", "float16": "float16", "int64": "int64",
                 "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool"}
# start address -> (end address, memfd, weakref to the numpy array over the mapping)
_SEGMENTS = {}


def _segment_of(t):
    """(start, fd) of the shared segment holding t's data, or None."""
    if t.device.type != "cpu" or t.numel() == 0:
        return None
    ptr = t.data_ptr()
    for start, (end, fd, alive) in list(_SEGMENTS.items()):
        if alive() is not None and start <= ptr < end:
            return start, fd
    return None


def _forget(start, fd):
    if _SEGMENTS.get(start, (None, None))[1] == fd:
        del _SEGMENTS[start]
    os.close(fd)  # the mapping keeps its own reference to the memory


def _map_segment(fd, nbytes, np_dtype):
    """A 1-D numpy array over the whole memfd; the fd is closed once nothing uses the memory."""
    import mmap

    import numpy as np
    buf = np.frombuffer(mmap.mmap(fd, max(nbytes, 1)), dtype=np.uint8)[:nbytes].view(np_dtype)
    start = buf.ctypes.data
    _SEGMENTS[start] = (start + max(nbytes, 1), fd, weakref.ref(buf))
    weakref.finalize(buf, _forget, start, fd)
    return buf


def _share_memory_(self):
    """Moves the tensor's data into memory shared with child processes (in place; returns self)."""
    if self.device.type != "cpu" or _is_shared(self):
        return self
    np_dtype = _NUMPY_DTYPES.get(str(self.dtype).replace("ember.", ""))
    if np_dtype is None:
        return self  # bfloat16: no numpy dtype to map the memory with
    import ember
    nbytes = self.numel() * self.element_size()
    fd = os.memfd_create("ember_shared", getattr(os, "MFD_CLOEXEC", 0))
    os.ftruncate(fd, max(nbytes, 1))
    shared = ember.from_numpy(_map_segment(fd, nbytes, np_dtype)).view(self.shape)
    with ember.no_grad():
        shared.copy_(self)
    self.data = shared
    return self


def _is_shared(self):
    """Whether the tensor's data lives in shared memory (CUDA tensors always count, as in torch)."""
    return self.device.type == "cuda" or _segment_of(self) is not None


def _rebuild_shared(dupfd, nbytes, np_dtype, shape, stride, offset, requires_grad, is_parameter):
    import ember
    base = ember.from_numpy(_map_segment(dupfd.detach(), nbytes, np_dtype))
    t = base.as_strided(shape, stride, offset)
    if is_parameter:
        return ember.nn.Parameter(t, requires_grad=requires_grad)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _reduce_tensor(t):
    """How multiprocessing pickles a tensor: shared ones as their memfd, others by value."""
    segment = _segment_of(t)
    if segment is None:
        return t.__reduce_ex__(2)
    from multiprocessing.reduction import DupFd
    start, fd = segment
    end = _SEGMENTS[start][0]
    size = t.element_size()
    np_dtype = _NUMPY_DTYPES[str(t.dtype).replace("ember.", "")]
    import ember
    return (_rebuild_shared, (DupFd(fd), end - start, np_dtype, tuple(t.shape), tuple(t.stride()),
                              (t.data_ptr() - start) // size, bool(t.requires_grad),
                              isinstance(t, ember.nn.Parameter)))


def init_reductions():
    """Teaches multiprocessing's pickler (Process arguments under spawn, queues) to send shared tensors
    as their shared memory instead of a copy."""
    from multiprocessing.reduction import ForkingPickler

    import ember
    for cls in (_C.Tensor, ember.nn.Parameter):
        ForkingPickler.register(cls, _reduce_tensor)


def _module_share_memory(self):
    """nn.Module.share_memory: share_memory_() on every parameter and buffer."""
    for t in list(self.parameters()) + list(self.buffers()):
        t.share_memory_()
    return self


def _install():
    # Only where missing, so a native implementation merged later wins.
    if not hasattr(_C.Tensor, "share_memory_"):
        _C.Tensor.share_memory_ = _share_memory_
    if not hasattr(_C.Tensor, "is_shared"):
        _C.Tensor.is_shared = _is_shared
    from ember.nn import Module
    if not hasattr(Module, "share_memory"):
        Module.share_memory = _module_share_memory
    if _C.Tensor.share_memory_ is _share_memory_:
        init_reductions()


_install()
