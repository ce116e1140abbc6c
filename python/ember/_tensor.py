"""Tensor methods that are simplest in Python (they call C++ underneath)."""
from ember import _C

Tensor = _C.Tensor


class RemovableHandle:
    """Returned by register_hook; .remove() unregisters the hook."""

    def __init__(self, tensor, hook_id):
        self._tensor = tensor
        self._id = hook_id

    def remove(self):
        self._tensor._remove_hook(self._id)


def _register_hook(self, hook):
    return RemovableHandle(self, _C.Tensor._register_hook_raw(self, hook))


Tensor._register_hook_raw = Tensor.register_hook
Tensor.register_hook = _register_hook


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


Tensor.__iter__ = _iter
