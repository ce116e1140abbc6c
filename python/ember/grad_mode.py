"""Grad-mode context managers, usable as decorators, as in torch."""
import functools

from ember import _C


class _GradModeContext:
    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    """Disables gradient recording inside the block."""

    def __init__(self):
        self._args = ()

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


class enable_grad(_GradModeContext):
    """Enables gradient recording inside the block (e.g. within no_grad)."""

    def __init__(self):
        self._args = ()

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


class set_grad_enabled(_GradModeContext):
    """Sets grad mode on or off: as a function call, or as a context manager."""

    def __init__(self, mode):
        self._args = (mode,)
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(bool(mode))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


class inference_mode(_GradModeContext):
    """Like no_grad, for code that will never need gradients."""

    def __init__(self, mode=True):
        self._args = (mode,)
        self._mode = mode

    def __enter__(self):
        self._guard = _C._InferenceModeGuard(bool(self._mode))

    def __exit__(self, *exc):
        del self._guard
