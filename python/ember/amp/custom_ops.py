"""custom_fwd / custom_bwd: autocast-aware decorators for the forward and
backward of an ember.autograd.Function, as torch.amp.custom_fwd/custom_bwd."""
import functools

from ember import _C
from ember.amp.autocast_mode import autocast

__all__ = ["custom_fwd", "custom_bwd"]


def _check_device_type(fn_name, device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"{fn_name}: expected `device_type` of type `str`, got: `{type(device_type)}`")


def _cast(value, device_type, dtype):
    """value with its floating tensors on device_type cast to dtype (lists,
    tuples and dicts are walked; everything else is returned as it is)."""
    if isinstance(value, _C.Tensor):
        if value.is_floating_point() and value.device.type == device_type:
            return value.to(dtype)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorates a Function's forward(ctx, ...). With cast_inputs=None the
    forward runs under whatever autocast state is current, and the state is
    remembered on ctx for custom_bwd. With a dtype, inside an autocast region
    the floating inputs on device_type are cast to it and the forward runs
    with autocast off (outside a region it runs unchanged)."""
    _check_device_type("custom_fwd", device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = _C.get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _C.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not _C.is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorates a Function's backward(ctx, ...) so it runs with the autocast
    state (enabled and dtype) its custom_fwd forward ran with."""
    _check_device_type("custom_bwd", device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        if not hasattr(ctx, "_fwd_used_autocast"):
            raise RuntimeError("custom_bwd: the Function's forward must be decorated with custom_fwd too")
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
