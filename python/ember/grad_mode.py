"""Grad-mode context managers, usable as decorators, as in torch.

Grad mode is thread-local (it lives in C++): switching it in one thread does
not affect another.
"""
import functools
import inspect

from ember import _C


class _GradModeContext:
    """Base: subclasses define _enter() returning what _exit(state) restores."""

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                # Each resumption of the generator runs under the mode.
                gen = fn(*args, **kwargs)
                value = None
                while True:
                    with self._clone():
                        try:
                            item = gen.send(value)
                        except StopIteration as stop:
                            return stop.value
                    value = yield item
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)
        return wrapper

    def _clone(self):
        return self.__class__(*self._args)

    def __enter__(self):
        # A stack, so one instance may be entered again while already active.
        self.__dict__.setdefault("_saved", []).append(self._enter())
        return self

    def __exit__(self, *exc):
        self._exit(self._saved.pop())
        return False


class _NoParamDecorator(_GradModeContext):
    """Also usable as a bare decorator: @ember.no_grad as well as @ember.no_grad()."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        self._args = ()


class no_grad(_NoParamDecorator):
    """Disables gradient recording inside the block."""

    def _enter(self):
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        return prev

    def _exit(self, prev):
        _C._set_grad_enabled(prev)


class enable_grad(_NoParamDecorator):
    """Enables gradient recording inside the block (e.g. within no_grad)."""

    def _enter(self):
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)
        return prev

    def _exit(self, prev):
        _C._set_grad_enabled(prev)


class set_grad_enabled(_GradModeContext):
    """Sets grad mode on or off: as a function call (takes effect at once),
    as a context manager (restored on exit), or as a decorator."""

    def __init__(self, mode):
        self._args = (mode,)
        self._mode = bool(mode)
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)

    def __call__(self, fn):
        # Used as a decorator: the mode applies to calls only, not from now on.
        _C._set_grad_enabled(self._prev)
        return super().__call__(fn)

    def _clone(self):
        # Constructing switches the mode; _enter below records what to restore.
        return _SetGradEnabledBlock(self._mode)

    def _enter(self):
        # __init__ already switched; restore what was current before it.
        return self._prev

    def _exit(self, prev):
        _C._set_grad_enabled(prev)


class _SetGradEnabledBlock(_GradModeContext):
    def __init__(self, mode):
        self._args = (mode,)
        self._mode = mode

    def _enter(self):
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)
        return prev

    def _exit(self, prev):
        _C._set_grad_enabled(prev)


class inference_mode(_GradModeContext):
    """Like no_grad, for code that will never need gradients."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # bare @ember.inference_mode on a function

    def __init__(self, mode=True):
        if not isinstance(mode, bool):
            return  # __new__ returned the decorated function; this is not called
        self._args = (mode,)
        self._mode = mode

    def _enter(self):
        return _C._InferenceModeGuard(self._mode)

    def _exit(self, guard):
        del guard  # its destructor restores the previous modes
