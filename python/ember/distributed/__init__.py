"""ember.distributed: process groups over gloo (CPU) and NCCL (GPU), as torch.distributed."""
from ember import _C
from ember._C._distributed import PrefixStore, Store, TCPStore

_D = _C._distributed

from ember.distributed.distributed_c10d import (  # noqa: E402
    Backend,
    FileStore,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    Work,
    all_gather,
    all_gather_object,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    default_pg_timeout,
    destroy_process_group,
    gather,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    irecv,
    is_available,
    is_gloo_available,
    is_initialized,
    is_nccl_available,
    isend,
    new_group,
    recv,
    reduce,
    reduce_scatter_tensor,
    scatter,
    send,
)
