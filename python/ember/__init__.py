"""ember: a deep-learning framework in the shape of PyTorch, with a C++ core."""
import os as _os

# OpenMP threads wait for the next parallel op by spinning briefly, then
# sleep: the ops of a training step, a few microseconds apart, skip a ~35 us
# wake-up each (a 64k-element op took 39 us instead of 4), while idle threads
# soon leave the cores to other processes (DataLoader workers, DDP ranks on a
# small machine), which spinning without end would starve. A user's own
# OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
if "OMP_WAIT_POLICY" not in _os.environ:
    _os.environ.setdefault("GOMP_SPINCOUNT", "10000")


def _preload_blas():
    # libember may link PyPI's OpenBLAS (scipy-openblas32); load it first so
    # the extension resolves it wherever pip put it.
    try:
        import ctypes
        import scipy_openblas32
    except ImportError:
        return
    path = _os.path.join(scipy_openblas32.get_lib_dir(), f"lib{scipy_openblas32.get_library()}.so")
    if _os.path.exists(path):
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


_preload_blas()

from ember import _C  # noqa: E402
from ember._C import Tensor, device, dtype  # noqa: F401
from ember._C import OutOfMemoryError  # noqa: F401  (a RuntimeError, like torch.OutOfMemoryError)

# Every function and dtype the extension exports (ember.zeros, ember.float32,
# ...), except private names.
globals().update({k: v for k, v in vars(_C).items() if not k.startswith("_")})

from ember.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402,F401
from ember import autograd  # noqa: E402,F401
from ember import _tensor  # noqa: E402,F401  (Python-side Tensor methods)
from ember._tensor_extra import nanmean, nansum, unique, unique_consecutive  # noqa: E402,F401
from ember._scatter_reduce import scatter_reduce  # noqa: E402,F401
from ember._sorting_extra import (bincount, bucketize, histc, kthvalue, median, quantile,  # noqa: E402,F401
                                  searchsorted)
from ember._tensor import Size  # noqa: E402,F401
from ember._memory_format import (channels_last, channels_last_3d, contiguous_format,  # noqa: E402,F401
                                  memory_format, preserve_format)
from ember import backends, cuda, nn, optim, utils  # noqa: E402,F401
from ember import linalg  # noqa: E402,F401
from ember import amp  # noqa: E402,F401
from ember import distributions  # noqa: E402,F401
from ember import multiprocessing  # noqa: E402,F401  (spawn, Tensor.share_memory_)
from ember import profiler  # noqa: E402,F401  (profile, record_function, schedule)
from ember import func  # noqa: E402,F401  (functional_call)
from ember import distributed  # noqa: E402,F401  (ember.distributed.is_initialized() after `import ember`, as torch)
from ember import testing  # noqa: E402,F401
from ember import special  # noqa: E402,F401
from ember import random  # noqa: E402,F401
from ember import fft  # noqa: E402,F401
from ember._stft import istft, stft  # noqa: E402,F401
from ember._dtype_info import finfo, iinfo  # noqa: E402,F401
from ember._broadcast import broadcast_shapes  # noqa: E402,F401
from ember._determinism import *  # noqa: E402,F401,F403  (use_deterministic_algorithms, ...)
from ember._strided import as_strided_scatter  # noqa: E402,F401
from ember._legacy import *  # noqa: E402,F401,F403  (FloatTensor & co., Tensor.new, strided, aliases)
from ember._igamma import igamma, igammac  # noqa: E402,F401
from ember.amp import autocast  # noqa: E402,F401
from ember.compiler import compile  # noqa: E402,F401  (returns its argument: no graph compiler)
from ember.serialization import load, save  # noqa: E402,F401
from ember import accelerator, cpu  # noqa: E402,F401  (torch.accelerator, torch.cpu)
from ember._default_device import get_default_device, set_default_device  # noqa: E402,F401  (and `with ember.device(...)`)
from ember import jit  # noqa: E402,F401  (pass-throughs: ember has no TorchScript)
from ember._asarray import asarray, frombuffer  # noqa: E402,F401
from ember import _tensor_constructor  # noqa: E402,F401  (ember.Tensor(2, 3), ember.Tensor([1, 2]))
from ember._tensor_api_extra import exports as _tensor_api_exports  # noqa: E402  (in-place ops, math, stats, shape)
globals().update(_tensor_api_exports())
from ember._foreach import exports as _foreach_exports  # noqa: E402  (_foreach_add_, _foreach_lerp_, ...)
globals().update(_foreach_exports())
from ember import _out_arg  # noqa: E402,F401  (out= for functions that take it in PyTorch)

__version__ = "0.1.0"
from ember import version  # noqa: E402,F401  (torch.version: cuda, hip, debug)
# Prefix for C++ programs: cmake -DCMAKE_PREFIX_PATH=<this> finds ember::ember.
cmake_prefix_path = _os.path.dirname(_os.path.abspath(__file__))
