"""ember.jit: torch.jit's names as pass-throughs, so scripts that script or
trace a model still run.

ember has no TorchScript: nothing is compiled, traced into a graph or
serialized as a program. ``script`` and ``trace`` return the function or
module they are given (``trace`` first calls it on the example inputs, so a
wrong call fails where torch's would), the decorators (``ignore``,
``unused``, ``export``, ``interface``, ``script_method``) return their
function, ``is_scripting()`` and ``is_tracing()`` are always False (the code
always runs eagerly), ``annotate(type, value)`` is ``value``, and
``fork``/``wait`` run the call at once. ``save``/``load`` raise
NotImplementedError: save the weights with ``ember.save(model.state_dict(), f)``
and rebuild the model in Python before ``load_state_dict``.
"""
import builtins
import contextlib
import typing

from ember import nn as _nn

# isinstance stays out of __all__: `from ember.jit import *` would shadow the builtin.
__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "interface", "script_method",
           "is_scripting", "is_tracing", "annotate", "Attribute", "Final", "ScriptModule", "ScriptFunction",
           "TracerWarning", "fork", "wait", "freeze", "optimize_for_inference", "optimized_execution",
           "enable_onednn_fusion", "onednn_fusion_enabled", "set_fusion_strategy", "save", "load"]

Final = typing.Final


class TracerWarning(Warning):
    """torch.jit.TracerWarning; ember never records a trace, so it is never issued."""


# Bases scripts subclass or check against: an ember "script module" is a plain nn.Module.
ScriptModule = _nn.Module
ScriptFunction = type(lambda: None)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns `obj` (a function, module or class) unchanged: ember runs Python eagerly."""
    return obj


def _as_args(example_inputs):
    if example_inputs is None:
        return ()
    return example_inputs if builtins.isinstance(example_inputs, tuple) else (example_inputs,)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """Calls `func` (a function or module) on the example inputs, so a call that
    cannot run fails here as with torch, and returns `func` itself: no trace is
    recorded, so data-dependent control flow keeps working afterwards."""
    if not callable(func):
        raise TypeError(f"ember.jit.trace: expected a function or a module, got {type(func).__name__}")
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("ember.jit.trace: example_kwarg_inputs or example_inputs should be given")
    if example_kwarg_inputs is not None:
        if not builtins.isinstance(example_kwarg_inputs, dict):
            raise RuntimeError("ember.jit.trace: example_kwarg_inputs should be a dict")
        func(**example_kwarg_inputs)
    else:
        func(*_as_args(example_inputs))
    for inputs in check_inputs or ():
        func(*_as_args(inputs))
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """Calls each method named in `inputs` ({"forward": example_inputs, ...}) once
    and returns `mod` itself."""
    if not builtins.isinstance(inputs, dict):
        raise AttributeError("ember.jit.trace_module: inputs must be a dict of method names to example inputs")
    for name, example in inputs.items():
        method = getattr(mod, name)
        if example_inputs_is_kwarg:
            method(**example)
        else:
            method(*_as_args(example))
    return mod


def ignore(drop=False, **kwargs):
    """@ignore and @ignore(drop=True): the function is returned unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """Returns fn unchanged (scripting would replace it by a raise)."""
    return fn


def export(fn):
    """Returns fn unchanged (scripting would compile it as an entry point)."""
    return fn


def interface(obj):
    """Returns the class unchanged."""
    return obj


def script_method(fn):
    """Returns fn unchanged (a method of a torch.jit.ScriptModule subclass)."""
    return fn


def is_scripting():
    """False: ember never compiles code, so the eager branch always runs."""
    return False


def is_tracing():
    """False: ember.jit.trace records nothing, so the eager branch always runs."""
    return False


def annotate(the_type, the_value):
    """Returns the_value: the type hint is for the TorchScript compiler ember lacks."""
    return the_value


def Attribute(value, type):  # noqa: A002  (torch's argument name)
    """Returns value (a typed attribute of a ScriptModule in torch)."""
    return value


def isinstance(obj, target_type):  # noqa: A001  (torch.jit.isinstance)
    """The builtin isinstance, also for subscripted typing targets such as List[int]."""
    origin = typing.get_origin(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union:  # Optional[int] too
        return any(isinstance(obj, a) for a in typing.get_args(target_type))
    if not builtins.isinstance(obj, origin):
        return False
    args = typing.get_args(target_type)
    if origin in (list, set, frozenset):
        return all(isinstance(x, args[0]) for x in obj)
    if origin is dict:
        return all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        return len(args) == len(obj) and all(isinstance(x, a) for x, a in zip(obj, args))
    return True


class _DoneFuture:
    """The result of fork: the call already ran."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def value(self):
        return self._value

    def done(self):
        return True


def fork(func, *args, **kwargs):
    """Runs func(*args, **kwargs) now and returns a finished future for wait()."""
    return _DoneFuture(func(*args, **kwargs))


def wait(future):
    """The value of a future from fork."""
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Returns mod unchanged."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Returns mod unchanged."""
    return mod


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """Does nothing: there is no graph executor to tune."""
    yield


_onednn_fusion = False


def enable_onednn_fusion(enabled):
    """Remembers the setting; it has no effect in ember."""
    global _onednn_fusion
    _onednn_fusion = bool(enabled)


def onednn_fusion_enabled():
    return _onednn_fusion


def set_fusion_strategy(strategy):
    """Returns the strategy unchanged; there is no fuser in ember."""
    return strategy


_NO_TORCHSCRIPT = ("ember has no TorchScript, so there is no program to {what}: save the weights with "
                   "ember.save(model.state_dict(), f), and to use them, build the model in Python and call "
                   "model.load_state_dict(ember.load(f))")


def save(m, f, _extra_files=None):
    """Raises NotImplementedError: ember has no TorchScript programs to save."""
    raise NotImplementedError("ember.jit.save: " + _NO_TORCHSCRIPT.format(what="save"))


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Raises NotImplementedError: ember has no TorchScript programs to load."""
    raise NotImplementedError("ember.jit.load: " + _NO_TORCHSCRIPT.format(what="load"))
