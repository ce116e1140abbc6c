"""ember.backends.cudnn: whether cuDNN is there, and its version.

The flags below exist so that code written for torch.backends.cudnn runs;
ember's GPU convolutions do not consult them yet.
"""
from ember import _C

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def version():
    """The loaded cuDNN's version as cuDNN encodes it (90800 = 9.8.0), or None."""
    v = _C._cuda.cudnn_version()
    return v or None


def is_available():
    """Whether ember can use cuDNN (built with it and the library loads)."""
    return version() is not None
