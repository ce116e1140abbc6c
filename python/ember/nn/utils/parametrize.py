"""ember.nn.utils.parametrize (as torch.nn.utils.parametrize): a parameter or buffer computed from stored
"original" tensors by small modules, every time it is read.

register_parametrization(module, "weight", P) moves module.weight to
module.parametrizations.weight.original (or original0, original1, ... when P.right_inverse returns several
tensors) and turns module.weight into a property returning P(original). The module's class is swapped for
a subclass holding that property (so other instances of the class are unaffected); removing the last
parametrization swaps it back. Inside `with cached():` each parametrized tensor is computed once."""
import contextlib

import ember
from ember.nn.modules.container import ModuleDict, ModuleList
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "type_before_parametrizations", "ParametrizationList"]

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed on first read and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_original(holder, name, value, as_parameter):
    if as_parameter:
        if not isinstance(value, Parameter):
            value = Parameter(value, value.requires_grad)
        holder.register_parameter(name, value)
    else:
        holder.register_buffer(name, value)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its originals."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        is_parameter = isinstance(original, Parameter)
        with ember.no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        self.is_tensor = isinstance(new, ember.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe and (new.dtype != original.dtype or tuple(new.shape) != tuple(original.shape)):
                raise ValueError(f"register_parametrization: when `right_inverse` outputs one tensor, it may not "
                                 f"change the dtype or shape: original {original.dtype} {list(original.shape)}, "
                                 f"right_inverse(original) {new.dtype} {list(new.shape)}")
            # Keep the original's identity (optimizers may hold it) and store the new value in it.
            with ember.no_grad():
                if new is not original:
                    original.data = new.detach()
            _register_original(self, "original", original, is_parameter)
        else:
            for i, value in enumerate(new):
                if not isinstance(value, ember.Tensor):
                    raise ValueError(f"register_parametrization: 'right_inverse' must return a Tensor or a sequence "
                                     f"of tensors, got element {i} of type {type(value).__name__}")
                value = value.detach().clone()
                if is_parameter:
                    value = Parameter(value, original.requires_grad)
                _register_original(self, f"original{i}", value, is_parameter)
        if not unsafe:
            out = self()
            if not isinstance(out, ember.Tensor):
                raise ValueError(f"register_parametrization: a parametrization must return a tensor, got "
                                 f"{type(out).__name__}")
            if out.dtype != original.dtype or tuple(out.shape) != tuple(original.shape):
                raise ValueError(f"register_parametrization: the parametrization may not change the dtype or shape "
                                 f"of the tensor (pass unsafe=True to allow it): original {original.dtype} "
                                 f"{list(original.shape)}, parametrized {out.dtype} {list(out.shape)}")

    def originals(self):
        return [self.original] if self.is_tensor else [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def right_inverse(self, value):
        """Stores `value` as the originals through the parametrizations' right inverses (in reverse)."""
        with ember.no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse")
                value = module.right_inverse(value)
            values = [value] if self.is_tensor else list(value)
            if len(values) != self.ntensors:
                raise ValueError(f"right_inverse must return {self.ntensors} tensors, got {len(values)}")
            for stored, new in zip(self.originals(), values):
                if tuple(stored.shape) == tuple(new.shape) and stored.dtype == new.dtype:
                    stored.copy_(new)
                else:
                    stored.data = new.detach().clone()

    def forward(self):
        first = self[0]
        x = first(self.original) if self.is_tensor else first(*self.originals())
        for module in list(self)[1:]:
            x = module(x)
        return x


def _make_property(name):
    def getter(self):
        parametrization = self.parametrizations[name]
        if _cache_enabled:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = parametrization()
            return _cache[key]
        return parametrization()

    def setter(self, value):
        self.parametrizations[name].right_inverse(value)

    return property(getter, setter)


def _swap_class(module):
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"_ember_class_before_parametrizations": cls})


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes module.<tensor_name> the output of `parametrization` (a Module) applied to the stored
    original; a second call on the same tensor chains another parametrization after the first."""
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization: parametrization must be an ember.nn.Module, got "
                        f"{type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        chain = module.parametrizations[tensor_name]
        if not unsafe:
            current = getattr(module, tensor_name)
            out = parametrization(current)
            if not isinstance(out, ember.Tensor) or out.dtype != current.dtype or \
                    tuple(out.shape) != tuple(current.shape):
                raise ValueError("register_parametrization: the parametrization may not change the dtype or shape "
                                 "of the tensor (pass unsafe=True to allow it)")
            if hasattr(parametrization, "right_inverse"):
                back = parametrization.right_inverse(current)
                if not isinstance(back, ember.Tensor):
                    raise ValueError("register_parametrization: a chained parametrization's right_inverse must "
                                     "return one tensor")
        chain.append(parametrization)
        chain.unsafe = chain.unsafe or unsafe
        return module
    if tensor_name in module._parameters:
        original = module._parameters[tensor_name]
    elif tensor_name in module._buffers:
        original = module._buffers[tensor_name]
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    if original is None:
        raise ValueError(f"register_parametrization: module.{tensor_name} is None")
    chain = ParametrizationList([parametrization], original, unsafe=unsafe)
    if tensor_name in module._parameters:
        del module._parameters[tensor_name]
    else:
        del module._buffers[tensor_name]
        module._non_persistent_buffers_set.discard(tensor_name)
    if not is_parametrized(module):
        _swap_class(module)
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = chain
    setattr(module.__class__, tensor_name, _make_property(tensor_name))
    return module


def is_parametrized(module, tensor_name=None):
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module):
    return getattr(module.__class__, "_ember_class_before_parametrizations", module.__class__)


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undoes register_parametrization for module.<tensor_name>: it becomes a plain parameter/buffer again
    holding the parametrized value (leave_parametrized=True, in the original's tensor object) or the stored
    original (False, only possible with a single original)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with ember.no_grad():
                value = getattr(module, tensor_name)
                if tuple(value.shape) == tuple(original.shape) and value.dtype == original.dtype:
                    original.copy_(value)
                else:
                    original.data = value.detach().clone()
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        with ember.no_grad():
            value = getattr(module, tensor_name).detach().clone()
        first = chain.original0
        original = Parameter(value, first.requires_grad) if isinstance(first, Parameter) else value
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = type_before_parametrizations(module)
    return module
