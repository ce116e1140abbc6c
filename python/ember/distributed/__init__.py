"""ember.distributed: process groups over gloo (CPU) and NCCL (GPU), as torch.distributed."""
from ember import _C
from ember._C._distributed import PrefixStore, Store, TCPStore

_D = _C._distributed


def is_available():
    """True: ember always has the distributed package (its backends may vary)."""
    return True
