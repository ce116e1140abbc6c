"""ember.compile: accepted so that scripts written for torch.compile run.

ember has no graph compiler: its ops run eagerly, each one a C++ call (CUDA
kernels fuse the common patterns themselves). compile therefore hands back the
module or function it was given, unchanged, whatever the options; used as
@ember.compile or @ember.compile(mode=...), it decorates the same way.
"""

__all__ = ["compile", "is_compiling"]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise TypeError(f"compile: expected a module or a function, got {type(model).__name__}")
    return model


def is_compiling():
    """False: nothing is ever being compiled in ember."""
    return False
