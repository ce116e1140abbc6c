"""ember.nn.Parameter: a Tensor that a Module registers as a learnable weight."""
import ember


class Parameter(ember.Tensor):
    """A leaf tensor that requires grad by default and is collected by Module.

    ember.Tensor is a pybind11 class without a Python-side constructor, so a
    Parameter is made by detaching the data (sharing its storage) and retyping
    that fresh Tensor object; __slots__ = () keeps the layouts identical.
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = ember.empty(0)
        if not isinstance(data, ember.Tensor):
            raise TypeError(f"Parameter: expected a Tensor as data, got {type(data).__name__}")
        t = data.detach()
        t.__class__ = cls
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__; the C++ base has no __init__

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (Parameter, (self.detach(), self.requires_grad))


class Buffer:
    """Marks a tensor assigned to a Module attribute as a buffer (as torch.nn.Buffer)."""

    def __init__(self, data, persistent=True):
        self.data = data
        self.persistent = persistent


# Lazy modules' placeholders, importable from here as from torch.nn.parameter.
from ember.nn._uninitialized import UninitializedBuffer, UninitializedParameter  # noqa: E402,F401
