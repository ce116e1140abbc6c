"""ember.cuda: GPU queries (as torch.cuda). This build's answers come from
the C++ core: a build without CUDA reports no devices."""
from ember import _C


def is_available():
    """True when ember was built with CUDA and a usable GPU is present."""
    return _C._cuda_is_available()


def device_count():
    """Number of CUDA devices ember can use."""
    return _C._cuda_device_count()
