"""ember.cpu: the CPU seen through the device API that ember.cuda offers, as
torch.cpu, so device-agnostic code (``getattr(ember, device.type).synchronize()``)
runs on the CPU too.

There is one CPU device; ember's CPU ops finish before they return, so
synchronize(), streams and events have nothing to wait for.
"""
import sys as _sys
import warnings as _warnings

__all__ = ["is_available", "is_initialized", "device_count", "current_device", "set_device", "synchronize",
           "Stream", "StreamContext", "Event", "stream", "current_stream", "amp"]


def is_available():
    """True: the CPU is always there."""
    return True


def is_initialized():
    """True: the CPU needs no initialisation."""
    return True


def device_count():
    """1: the CPU counts as one device (not one per core)."""
    return 1


def current_device():
    """The string "cpu", as torch.cpu.current_device()."""
    return "cpu"


def set_device(device):
    """Does nothing: there is only one CPU device."""


def synchronize(device=None):
    """Returns at once: CPU ops are finished when they return."""


class Stream:
    """A stand-in stream: CPU work runs in order on the calling thread."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    """A stand-in event that is always complete."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_stream = Stream()
_current_stream = _default_stream


def current_stream(device=None):
    """The stream selected by the innermost `with ember.cpu.stream(...)` (the default one outside)."""
    return _current_stream


class StreamContext:
    """Selects `stream` inside the block (None: no change) and restores the previous one."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self):
        global _current_stream
        if self.stream is not None:
            self.prev_stream = _current_stream
            _current_stream = self.stream

    def __exit__(self, *exc):
        global _current_stream
        if self.stream is not None:
            _current_stream = self.prev_stream
        return False


def stream(stream):
    """`with ember.cpu.stream(s):` makes s the current stream in the block."""
    return StreamContext(stream)


def _make_amp():
    import types

    from ember.amp import autocast_mode, grad_scaler

    class autocast(autocast_mode.autocast):
        """ember.cpu.amp.autocast(args...) is ember.amp.autocast("cpu", args...)."""

        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            _warnings.warn("`ember.cpu.amp.autocast(args...)` is deprecated. "
                           "Please use `ember.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
            import ember
            super().__init__("cpu", enabled=enabled, dtype=ember.bfloat16 if dtype is None else dtype,
                             cache_enabled=cache_enabled)

    class GradScaler(grad_scaler.GradScaler):
        """ember.cpu.amp.GradScaler(args...) is ember.amp.GradScaler("cpu", args...)."""

        def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            _warnings.warn("`ember.cpu.amp.GradScaler(args...)` is deprecated. "
                           "Please use `ember.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                           stacklevel=2)
            super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    module = types.ModuleType(__name__ + ".amp", "torch.cpu.amp's deprecated autocast / GradScaler spellings.")
    module.autocast = autocast
    module.GradScaler = GradScaler
    module.__all__ = ["autocast", "GradScaler"]
    return module


amp = _make_amp()
_sys.modules[amp.__name__] = amp  # `import ember.cpu.amp` / `from ember.cpu.amp import autocast`
