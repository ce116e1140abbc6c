"""ember.multiprocessing: Python's multiprocessing plus spawn(), as torch.multiprocessing.

Everything of the standard module is re-exported (Process, Queue, get_context, ...).
Tensors sent to other processes (spawn args, Queue.put, Pipe.send) are pickled by value,
unless they were moved into shared memory with Tensor.share_memory_() / Module.share_memory():
those travel as their shared memory, so Hogwild-style training, where workers update one shared
set of parameters in place, works under fork and spawn (see _sharing.py).
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from ember.multiprocessing.spawn import (ProcessContext, ProcessException, ProcessExitedException,  # noqa: F401
                                         ProcessRaisedException, ProcessSpawnContext, SpawnContext, spawn,
                                         start_processes)
from ember.multiprocessing._sharing import (get_all_sharing_strategies, get_sharing_strategy,  # noqa: F401
                                            init_reductions, set_sharing_strategy)

__all__ = list(multiprocessing.__all__) + [
    "ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException",
    "ProcessSpawnContext", "SpawnContext", "spawn", "start_processes",
    "get_all_sharing_strategies", "get_sharing_strategy", "init_reductions", "set_sharing_strategy",
]
