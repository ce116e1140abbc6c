"""skip_init (torch.nn.utils.skip_init): a module whose parameters and buffers hold
uninitialized memory, for code that fills them itself (from a checkpoint)."""
import inspect


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with uninitialized parameters and buffers on kwargs' device.

    ember has no "meta" device, so the module is built on its device (its initializers run)
    and every parameter and buffer is then replaced by an uninitialized tensor of the same
    shape, as torch's result holds: callers must not rely on the values either way.
    """
    from ember.nn.modules.module import Module

    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.get("device", "cpu")
    kwargs["device"] = device
    return module_cls(*args, **kwargs).to_empty(device=device)
