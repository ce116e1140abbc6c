"""Variable: PyTorch's pre-0.4 wrapper, kept for old scripts. Tensors do
everything Variables did; Variable(t) returns a tensor."""
from ember import _C

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor)


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False) returns a new leaf tensor sharing
    data's memory (data.detach()) with requires_grad set; isinstance(t,
    Variable) is True for every tensor. `volatile` is accepted and ignored,
    as in torch (use ember.no_grad())."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            data = _C.empty((0,))
        if not isinstance(data, _C.Tensor):
            raise TypeError(f"Variable: data must be a Tensor, not {type(data).__name__}")
        result = data.detach()
        if requires_grad:
            result.requires_grad_(True)
        return result
