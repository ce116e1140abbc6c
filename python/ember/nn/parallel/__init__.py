"""ember.nn.parallel: DistributedDataParallel, and DataParallel for one device."""
from ember.nn.parallel.distributed import DistributedDataParallel  # noqa: F401
from ember.nn.parallel.data_parallel import DataParallel, data_parallel  # noqa: F401

__all__ = ["DistributedDataParallel", "DataParallel", "data_parallel"]
