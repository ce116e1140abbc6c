"""ember.nn.parallel: DistributedDataParallel."""
from ember.nn.parallel.distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DistributedDataParallel"]
