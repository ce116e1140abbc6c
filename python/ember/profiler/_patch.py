"""Timing wrappers around ember's public callables, installed only while a profile records.

ember has no central dispatcher to hook, so profiling replaces, for its duration, the
public functions of `ember` and `ember.nn.functional`, the methods and operators of
`ember.Tensor`, `autograd.backward` / `autograd.grad`, `nn.Module.__call__`, the
optimizers' `step` / `zero_grad` and the DataLoader iterators' `__next__` with
wrappers that open an event around the call. remove() puts every original back, so
nothing is wrapped (and nothing costs) outside a profile. A wrapper that outlives its
profile (someone kept a reference) just calls through.
"""
import functools
import types

from ember.profiler import _recorder

# Operators and the op names their events take ("a + b" is an "ember::add" event).
_OPERATORS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__rsub__": "rsub",
    "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div",
    "__rtruediv__": "div", "__itruediv__": "div_", "__floordiv__": "floor_divide",
    "__rfloordiv__": "floor_divide", "__ifloordiv__": "floor_divide_", "__mod__": "remainder",
    "__rmod__": "remainder", "__imod__": "remainder_", "__pow__": "pow", "__rpow__": "pow", "__ipow__": "pow_",
    "__matmul__": "matmul", "__rmatmul__": "matmul", "__neg__": "neg", "__pos__": "positive", "__abs__": "abs",
    "__invert__": "bitwise_not", "__and__": "bitwise_and", "__rand__": "bitwise_and", "__iand__": "bitwise_and_",
    "__or__": "bitwise_or", "__ror__": "bitwise_or", "__ior__": "bitwise_or_", "__xor__": "bitwise_xor",
    "__rxor__": "bitwise_xor", "__ixor__": "bitwise_xor_", "__lshift__": "bitwise_left_shift",
    "__rshift__": "bitwise_right_shift", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__eq__": "eq", "__ne__": "ne", "__getitem__": "getitem", "__setitem__": "setitem",
}

# Metadata queries and configuration, not work: torch records no op for these either.
_SKIP_PREFIXES = ("is_", "get_", "set_", "are_", "use_", "has_")
_SKIP_NAMES = {
    "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "storage_offset", "data_ptr",
    "manual_seed", "seed", "initial_seed", "typename", "promote_types", "result_type", "can_cast",
    "broadcast_shapes", "compile", "register_hook", "retain_grad", "requires_grad_",
}
_AUTOGRAD_NAMES = {"backward": "autograd::backward", "grad": "autograd::grad"}

_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType)
_installed = []  # (owner, attribute name, original object)


def _is_plain_callable(obj):
    # Functions and pybind methods (instancemethod); not classes, properties or static methods.
    return isinstance(obj, _FUNCTION_TYPES) or type(obj).__name__ == "instancemethod"


def _wants(name):
    return not name.startswith("_") and name not in _SKIP_NAMES and not name.startswith(_SKIP_PREFIXES)


def _op_wrapper(fn, event_name):
    @functools.wraps(fn)
    def timed(*args, **kwargs):
        recorder = _recorder.active
        if recorder is None:
            return fn(*args, **kwargs)
        ev = recorder.begin(event_name, "op", args, kwargs)
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            recorder.end(ev)
            raise
        recorder.end(ev, result)
        return result
    timed.__wrapped_by_ember_profiler__ = True
    return timed


def _self_named_wrapper(method, kind, name_of):
    """A wrapper for a method whose event is named after its instance (the module's class)."""
    @functools.wraps(method)
    def timed(self, *args, **kwargs):
        recorder = _recorder.active
        if recorder is None:
            return method(self, *args, **kwargs)
        ev = recorder.begin(name_of(self), kind, args, kwargs)
        try:
            result = method(self, *args, **kwargs)
        except BaseException:
            recorder.end(ev)
            raise
        recorder.end(ev, result)
        return result
    timed.__wrapped_by_ember_profiler__ = True
    return timed


def _module_event(module):
    return "nn.Module: " + type(module).__name__


def _optimizer_event(method):
    # torch's names: "Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad"
    return lambda opt: f"Optimizer.{method}#{type(opt).__name__}.{method}"


def _loader_event(iterator):
    # torch's name for fetching a batch: "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
    return f"enumerate(DataLoader)#{type(iterator).__name__}.__next__"


def _subclasses(cls):
    """cls and every class derived from it, each once (a diamond reaches one twice)."""
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        if c not in out:
            out.append(c)
            todo.extend(c.__subclasses__())
    return out


def _targets():
    """(owner, attribute, event name) of everything to wrap."""
    import ember
    import ember.autograd
    import ember.nn.functional as F
    out = []
    for namespace in (ember, F):
        for name, obj in vars(namespace).items():
            if _wants(name) and _is_plain_callable(obj):
                out.append((namespace, name, "ember::" + name))
    for name, obj in vars(ember.Tensor).items():
        if name in _OPERATORS:
            out.append((ember.Tensor, name, "ember::" + _OPERATORS[name]))
        elif name == "backward":  # (Tensor.grad is the gradient property, not autograd.grad)
            out.append((ember.Tensor, name, _AUTOGRAD_NAMES[name]))
        elif _wants(name) and _is_plain_callable(obj):
            out.append((ember.Tensor, name, "ember::" + name))
    for name, event in _AUTOGRAD_NAMES.items():
        out.append((ember.autograd, name, event))
    return out


def _method_targets():
    """(class, method, event kind, event name from the instance) of module calls, optimizer
    steps and DataLoader batches."""
    import ember.nn
    import ember.optim
    from ember.utils.data import dataloader
    out = [(ember.nn.Module, "__call__", "module", _module_event)]
    for cls in _subclasses(ember.optim.Optimizer):
        for method in ("step", "zero_grad"):
            if method in vars(cls) and not getattr(vars(cls)[method], "__wrapped_by_ember_profiler__", False):
                out.append((cls, method, "call", _optimizer_event(method)))
    for cls in (getattr(dataloader, "_SingleProcessIter", None), getattr(dataloader, "_MultiProcessIter", None)):
        if cls is not None and "__next__" in vars(cls):
            out.append((cls, "__next__", "call", _loader_event))
    return out


def install():
    """Wraps every target; a second call before remove() does nothing."""
    if _installed:
        return
    try:
        for owner, name, event in _targets():
            original = vars(owner)[name]
            if getattr(original, "__wrapped_by_ember_profiler__", False):
                continue
            setattr(owner, name, _op_wrapper(original, event))
            _installed.append((owner, name, original))
        for owner, name, kind, name_of in _method_targets():
            original = vars(owner)[name]
            setattr(owner, name, _self_named_wrapper(original, kind, name_of))
            _installed.append((owner, name, original))
    except BaseException:
        remove()
        raise


def remove():
    """Puts every original back, in reverse order."""
    while _installed:
        owner, name, original = _installed.pop()
        setattr(owner, name, original)

