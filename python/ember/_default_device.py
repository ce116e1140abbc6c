"""The default device of the factory functions, as torch 2.x:
``ember.set_default_device(device)``, ``ember.get_default_device()`` and
``with ember.device("cuda"):``.

The setting lives in C++ (python/src/default_device.cpp), one per thread as
in torch, and is read only where a factory (empty, zeros, ones, full, rand,
randn, randint, randperm, normal, arange, linspace, logspace, eye,
tril/triu_indices, tensor, as_tensor) is called without ``device=``; so the
unset default costs one thread-local read. ``*_like`` keep their input's
device, and ``nn`` modules, which create their parameters with
``ember.empty(..., device=None)``, follow the default.

Setting "cuda" does not check for a GPU: the first factory call does, and
raises RuntimeError("ember.cuda: no CUDA GPU is available: ...").
"""
import threading

from ember import _C

__all__ = ["set_default_device", "get_default_device"]

# Per thread: the defaults in effect when each open `with ember.device(...)` block began.
_blocks = threading.local()


def set_default_device(device):
    """Makes `device` ("cuda", "cuda:1", "cpu", an ember.device or a CUDA
    index) the device of factory calls without device= on this thread;
    None goes back to the CPU."""
    _C._set_default_device(device)


def get_default_device():
    """The device factory calls without device= use on this thread (cpu unless set)."""
    device = _C._get_default_device()
    return _C.device("cpu") if device is None else device


def _enter(self):
    """`with ember.device("cuda"):` sets the default device inside the block."""
    stack = getattr(_blocks, "previous", None)
    if stack is None:
        stack = _blocks.previous = []
    stack.append(_C._get_default_device())
    _C._set_default_device(self)
    return self


def _exit(self, exc_type, exc, tb):
    """Restores the default device from before the block, also after an exception."""
    _C._set_default_device(_blocks.previous.pop())
    return False


_C.device.__enter__ = _enter
_C.device.__exit__ = _exit
