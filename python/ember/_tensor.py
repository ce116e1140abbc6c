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

_plain_is_contiguous = Tensor.is_contiguous


def _is_contiguous(self, memory_format=None):
    if memory_format is None:
        return _plain_is_contiguous(self)
    from ember._memory_format import is_contiguous_as
    return is_contiguous_as(self, memory_format, _plain_is_contiguous)


Tensor.is_contiguous = _is_contiguous


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ember.Size([2, 3])."""

    def __repr__(self):
        return f"ember.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    # Slices and concatenations stay Sizes, as torch's: x.shape[1:].numel(), x.shape + (4,).
    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):  # pickles as ember.Size([...]), whatever the overrides above do
        return (Size, (tuple(self),))


_shape = Tensor.shape
_size = Tensor.size
Tensor.shape = property(lambda self: Size(_shape.__get__(self)), doc="The tensor's shape, as an ember.Size.")


def _size_method(self, dim=None):
    return Size(_size(self)) if dim is None else _size(self, dim)


Tensor.size = _size_method


# ---- pickle and copy.deepcopy
# A tensor pickles as its values (a numpy array; bfloat16, which numpy lacks, as
# float32 widened exactly), dtype, device and requires_grad. Views are saved as
# copies: storage sharing between tensors is not kept, unlike torch.

def _dtype_by_name(name):
    import ember
    dtype = getattr(ember, name.rpartition(".")[2], None)
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"cannot unpickle a tensor of unknown dtype {name!r}")
    return dtype


def _rebuild_tensor(array, dtype_name, device, requires_grad):
    """Inverse of Tensor.__reduce_ex__ (stable name: pickles refer to it)."""
    import numpy as np
    import ember
    # A private, writable copy; contiguous() also fixes the (0, 0) strides numpy gives empty copies.
    t = ember.from_numpy(np.array(array, copy=True, order="C")).contiguous()
    dtype = _dtype_by_name(dtype_name)
    if t.dtype != dtype:
        t = t.to(dtype)
    if device != "cpu":
        t = t.to(device)
    return t.requires_grad_(requires_grad)


def _reduce_ex(self, protocol):
    import ember
    if self.requires_grad and not self.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
                           "does not support crossing process boundaries. If you just want to transfer the data, "
                           "call detach() on the tensor before serializing (e.g., putting it on the queue).")
    data = self.detach()
    if data.device.type != "cpu":
        data = data.cpu()
    if data.dtype == ember.bfloat16:
        data = data.float()
    return (_rebuild_tensor, (data.numpy(), str(self.dtype), str(self.device), self.requires_grad))


def _deepcopy(self, memo):
    """A leaf's deep copy: new storage, the same requires_grad, and a copy of .grad (as torch)."""
    if id(self) in memo:
        return memo[id(self)]
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                           "protocol at the moment. If you were attempting to deepcopy a module, this may be "
                           "because of a torch.nn.utils.weight_norm usage, see "
                           "https://github.com/pytorch/pytorch/pull/103001")
    new = self.detach().clone()
    if type(self) is not Tensor:  # subclasses (Parameter) keep their class, as in __reduce_ex__
        new.__class__ = type(self)
    new.requires_grad_(self.requires_grad)
    memo[id(self)] = new
    if self.grad is not None:
        new.grad = _deepcopy(self.grad, memo)
    return new


Tensor.__reduce_ex__ = _reduce_ex
Tensor.__deepcopy__ = _deepcopy


def _format(self, format_spec):
    # As torch: a 0-d plain tensor formats as its Python number (f"{loss:.4f}", f"{loss}" -> "0.6931");
    # anything else goes to object.__format__ (str() for "", TypeError for a spec).
    if type(self) is Tensor and self.dim() == 0:
        return self.item().__format__(format_spec)
    return object.__format__(self, format_spec)


Tensor.__format__ = _format
