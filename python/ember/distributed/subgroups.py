"""new_subgroups and new_subgroups_by_enumeration (torch.distributed): cut the world
into disjoint groups in one call. Every rank makes every subgroup (as new_group
requires) and gets back its own and the list of all."""
import ember
from ember.distributed import distributed_c10d as c10d


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """(this rank's subgroup or None, [every subgroup]) for disjoint lists of global ranks."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    owner = {}
    for i, ranks in enumerate(ranks_per_subgroup_list):
        for r in ranks:
            if r in owner:
                raise ValueError(f"Rank {r} has appeared in both subgroup {ranks_per_subgroup_list[owner[r]]} and "
                                 f"{list(ranks)}")
            owner[r] = i
    me = c10d.get_rank()
    current, subgroups = None, []
    for ranks in ranks_per_subgroup_list:
        group = c10d.new_group(list(ranks), timeout=timeout, backend=backend, pg_options=pg_options)
        subgroups.append(group)
        if me in ranks:
            current = group
    return current, subgroups


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """(this rank's subgroup, [every subgroup]) for consecutive blocks of group_size ranks
    (by default the number of GPUs of a machine)."""
    if group is not None:
        raise NotImplementedError("new_subgroups: splitting a group other than the world is not supported")
    if group_size is None:
        if not ember.cuda.is_available():
            raise ValueError("Default group size only takes effect when CUDA is available. If your subgroup "
                             "using a backend that does not depend on CUDA,please pass in 'group_size' correctly.")
        group_size = ember.cuda.device_count()
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = c10d.get_world_size()
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by 'group_size={group_size}'")
    blocks = [list(range(start, start + group_size)) for start in range(0, world_size, group_size)]
    return new_subgroups_by_enumeration(blocks, timeout=timeout, backend=backend, pg_options=pg_options)


def get_pg_count():
    """How many process groups this process has made: the default one and every new_group() call."""
    if not c10d.is_initialized():
        return 0
    return 1 + c10d._world.group_count
