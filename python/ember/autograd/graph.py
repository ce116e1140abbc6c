"""Hooks on the tensors autograd saves for backward, as torch.autograd.graph.

    with ember.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        y = model(x)          # pack_hook(t) for every tensor an op saves
    y.sum().backward()        # unpack_hook(packed) each time backward needs one

The hook stack lives in C++ (autograd/saved_hooks.h) and is per thread: ops
check it once per recorded node. What pack_hook returns is stored instead of
the tensor (any Python object); unpack_hook must give back a tensor with the
saved tensor's shape, dtype and device (ember raises an error naming the node
otherwise). As in torch, a pack hook that returns the very tensor it got keeps
an op's output alive through the graph (a reference cycle): return
``t.detach()`` or a copy instead.
"""
import contextlib

from ember import _C

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class saved_tensors_hooks:
    """Context manager setting a pair of pack / unpack hooks for saved tensors.
    Nested contexts: the innermost pair applies."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._pop_saved_tensors_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept as CPU copies (in pinned memory with
    pin_memory=True when the device is available) and copied back to their
    device when backward needs them. Tensors already on the CPU stay as they
    are (still through the hooks)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        import ember
        device_module = getattr(ember, device_type, ember.cuda)

        def pack_to_cpu(tensor):
            # detach(): the packed value must not hold the op's output with
            # its history, or the graph would keep itself alive.
            if tensor.device.type == "cpu":
                return (tensor.device, tensor.detach())
            if not (pin_memory and device_module.is_available()):
                return (tensor.device, tensor.detach().cpu())
            packed = _C.empty(tuple(tensor.shape), dtype=tensor.dtype).pin_memory()
            packed.copy_(tensor.detach(), non_blocking=True)
            return (tensor.device, packed)

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside, registering saved-tensor hooks raises RuntimeError(error_message);
    entering it while hooks are in force raises that error at once."""
    previous = _C._saved_tensors_hooks_get_disabled_error_message()
    try:
        _C._saved_tensors_hooks_disable(error_message)
        yield
    finally:
        if previous is None:
            _C._saved_tensors_hooks_enable()
        else:
            _C._saved_tensors_hooks_disable(previous)


@contextlib.contextmanager
def _no_saved_tensors_hooks():
    """A scope where ops save tensors plainly whatever hooks are in force
    (checkpoint runs its block under it: that graph is dropped)."""
    _C._push_no_saved_tensors_hooks()
    try:
        yield
    finally:
        _C._pop_saved_tensors_default_hooks()
