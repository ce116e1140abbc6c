"""ember.use_deterministic_algorithms and its debug-mode spellings, as torch names them.

With the switch on, the GPU paths that add with atomics take deterministic variants (index accumulation
sorts its targets; embedding and max-pool gradients go through it; cuDNN picks deterministic algorithms;
attention's backward takes the math path), and the few with none raise a RuntimeError naming the op, or
warn with warn_only=True. The CPU kernels are deterministic either way."""
from ember import _C

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]

_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def use_deterministic_algorithms(mode, *, warn_only=False):
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms: expected mode to be a bool, but got {type(mode).__name__}")
    _C._set_deterministic_algorithms(mode, bool(warn_only))


def are_deterministic_algorithms_enabled():
    return _C._deterministic_algorithms()


def is_deterministic_algorithms_warn_only_enabled():
    return _C._deterministic_algorithms_warn_only()


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": off; 1 / "warn": on, warning for ops with no deterministic variant; 2 / "error": on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("set_deterministic_debug_mode: invalid value of debug_mode, expected one of "
                               f"`default`, `warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError("set_deterministic_debug_mode: invalid value of debug_mode, expected 0, 1, or 2, "
                               f"but got {debug_mode}")
    else:
        raise TypeError("set_deterministic_debug_mode: debug_mode must be str or int, but got "
                        f"{type(debug_mode).__name__}")
    _C._set_deterministic_algorithms(debug_mode != 0, debug_mode == 1)


def get_deterministic_debug_mode():
    if not are_deterministic_algorithms_enabled():
        return 0
    return 1 if is_deterministic_algorithms_warn_only_enabled() else 2
