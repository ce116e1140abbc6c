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
from ember.distributed.errors import DistBackendError, DistError, DistNetworkError, DistStoreError  # noqa: E402
from ember.distributed.environment import (  # noqa: E402
    get_default_backend_for_device,
    get_node_local_rank,
    is_backend_available,
    is_mpi_available,
    is_torchelastic_launched,
    is_ucc_available,
    is_xccl_available,
)
from ember.distributed.collectives_extra import (  # noqa: E402
    P2POp,
    all_to_all,
    all_to_all_single,
    batch_isend_irecv,
    monitored_barrier,
    reduce_scatter,
)
from ember.distributed.object_collectives import (  # noqa: E402
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from ember.distributed.subgroups import get_pg_count, new_subgroups, new_subgroups_by_enumeration  # noqa: E402
