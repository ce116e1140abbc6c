"""UninitializedParameter and UninitializedBuffer (torch.nn.parameter): the
placeholders of lazy modules, whose shape is only known at the first forward.
They hold no data (a 0-element tensor) until materialize(shape) gives them
memory and turns them into a plain Parameter / Tensor, keeping their identity."""
import ember
from ember.nn.parameter import Parameter


def _materialize(t, shape, device, dtype, becomes):
    shape = tuple(shape) if isinstance(shape, (tuple, list, ember.Size)) else (shape,)
    device = t.device if device is None else device
    dtype = t.dtype if dtype is None else dtype
    with ember.no_grad():
        t.data = ember.empty(*shape, device=device, dtype=dtype)
    t.__class__ = becomes


class UninitializedTensorMixin:
    __slots__ = ()

    def materialize(self, shape, device=None, dtype=None):
        """Gives the tensor uninitialized memory of `shape` (on device, of dtype: by default its own)
        and makes it a regular tensor of its final class, in place."""
        _materialize(self, shape, device, dtype, self.cls_to_become)

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter without a shape yet (lazy modules' weights before their first forward)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        t = ember.empty(0, device=device, dtype=dtype)
        t.requires_grad_(requires_grad)
        t.__class__ = cls
        return t

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __repr__(self):
        return "<UninitializedParameter>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, ember.Tensor):
    """A buffer without a shape yet (lazy batch norms' running statistics before their first forward)."""

    __slots__ = ()
    cls_to_become = ember.Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        t = ember.empty(0, device=device, dtype=dtype)
        t.requires_grad_(requires_grad)
        t.__class__ = cls
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass

    def __repr__(self):
        return "<UninitializedBuffer>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


def is_lazy(t):
    """True for an UninitializedParameter / UninitializedBuffer."""
    return isinstance(t, UninitializedTensorMixin)
