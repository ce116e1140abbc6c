"""Sharing strategies and Tensor.share_memory_, as torch.multiprocessing has them.

ember has no way to move an existing tensor's storage into shared memory in place
(that needs C++ storage swapping), and its tensors pickle by value. So share_memory_()
returns the tensor unchanged and is_shared() is False: code that calls them runs, but a
worker's in-place updates are not seen by other processes. The sharing strategy is
recorded for torch compatibility and changes nothing.
"""
import sys

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


def init_reductions():
    """torch registers shared-memory pickling of tensors here; ember's tensors pickle by value."""


def _share_memory_(self):
    """No-op returning self: ember cannot move a tensor into shared memory (see ember.multiprocessing)."""
    return self


def _is_shared(self):
    """False: ember tensors never live in memory shared between processes."""
    return False


def _module_share_memory(self):
    """nn.Module.share_memory: share_memory_() on every parameter and buffer (a no-op in ember)."""
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


_install()
