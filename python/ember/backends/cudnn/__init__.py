"""ember.backends.cudnn: whether cuDNN is there, its version, and the switches
of the GPU convolutions, as torch.backends.cudnn.

The flags are module attributes backed by one C++ setting each (read by
cuda/conv.cpp at every convolution):

- `enabled` (True): False makes CUDA convolutions raise NotImplementedError,
  as cuDNN is ember's only GPU convolution;
- `benchmark` (False): time cuDNN's algorithms at the first call of each
  convolution shape and keep the fastest;
- `deterministic` (False): only algorithms with reproducible results;
- `allow_tf32` (True, as in PyTorch): float32 convolutions may use TF32
  tensor cores.

`flags(...)` sets some of them for a `with` block.
"""
import contextlib
import sys
import types

from ember import _C

_FLAGS = ("enabled", "benchmark", "deterministic", "allow_tf32")


def version():
    """The loaded cuDNN's version as cuDNN encodes it (90800 = 9.8.0), or None."""
    v = _C._cuda.cudnn_version()
    return v or None


def is_available():
    """Whether ember can use cuDNN (built with it and the library loads)."""
    return version() is not None


@contextlib.contextmanager
def flags(enabled=None, benchmark=None, deterministic=None, allow_tf32=None):
    """Sets the given flags (None: unchanged) inside the block and restores
    all of them after."""
    before = _C._get_cudnn_flags()
    wanted = dict(enabled=enabled, benchmark=benchmark, deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        for name, value in wanted.items():
            if value is not None:
                _C._set_cudnn_flag(name, bool(value))
        yield
    finally:
        for name in _FLAGS:
            _C._set_cudnn_flag(name, bool(before[name]))


def _flag_property(name):
    def get(self):
        return bool(_C._get_cudnn_flags()[name])

    def set_(self, value):
        _C._set_cudnn_flag(name, bool(value))

    return property(get, set_, doc=f"ember.backends.cudnn.{name} (a C++ setting)")


class _CudnnModule(types.ModuleType):
    """This module, with the flags as properties over the C++ settings."""


for _name in _FLAGS:
    setattr(_CudnnModule, _name, _flag_property(_name))
del _name

sys.modules[__name__].__class__ = _CudnnModule
