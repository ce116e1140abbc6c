"""ember.distributed.algorithms, as torch.distributed.algorithms: the Join
context manager for training with uneven inputs across ranks."""
from ember.distributed.algorithms.join import Join, Joinable, JoinHook  # noqa: F401

__all__ = ["Join", "Joinable", "JoinHook"]
