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


class _PostAccumulateGradHookHandle:
    """Returned by register_post_accumulate_grad_hook; .remove() unregisters it."""

    def __init__(self, tensor, hook_id):
        self._tensor = tensor
        self._id = hook_id

    def remove(self):
        self._tensor._remove_post_accumulate_grad_hook(self._id)


def _register_post_accumulate_grad_hook(self, hook):
    """hook(tensor) runs after backward accumulated into tensor.grad (leaves only)."""
    return _PostAccumulateGradHookHandle(self, self._register_post_accumulate_grad_hook(hook))


Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


Tensor.__iter__ = _iter


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ember.Size([2, 3])."""

    def __repr__(self):
        return f"ember.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


_shape = Tensor.shape
_size = Tensor.size
Tensor.shape = property(lambda self: Size(_shape.__get__(self)), doc="The tensor's shape, as an ember.Size.")


def _size_method(self, dim=None):
    return Size(_size(self)) if dim is None else _size(self, dim)


Tensor.size = _size_method
