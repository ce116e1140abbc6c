"""torch.distributed's process-group API over ember's C++ process groups.

The default group and every new_group() are C++ ProcessGroups (gloo for CPU
tensors) that met through one Store; each group gets its own key namespace in
it ("default_pg", "group_1", ...). Ranks passed to the collectives (src, dst)
are global ranks, as in PyTorch; they are translated to the group's ranks here.

Environment: EMBER_GLOO_IFNAME (or GLOO_SOCKET_IFNAME) picks the network
interface gloo listens on (default: loopback when the master address is local
or unknown, else this host's name); EMBER_DISTRIBUTED_DEBUG=DETAIL makes every
collective first compare (sequence number, kind, dtype, numel, root, op)
across ranks and raise ValueError on every rank at the first mismatch. Without
it a mismatch is never silent either: the ranks wait in different gloo slots
and fail after the group's timeout, naming the collective and its number.
"""
import os
from datetime import timedelta
from urllib.parse import parse_qs, urlparse

import ember
from ember import _C
from ember.distributed.errors import DistBackendError, DistStoreError, as_dist_error

_D = _C._distributed

ReduceOp = _D.ReduceOp
Work = _D.Work
ProcessGroup = _D.ProcessGroup
FileStore = _D.FileStore

default_pg_timeout = timedelta(minutes=30)

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class Backend(str):
    """A backend name, lower-cased ("gloo", "nccl"), as torch.distributed.Backend."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name!r}")
        value = name.lower()
        if value not in (cls.GLOO, cls.NCCL):
            raise ValueError(f"Invalid backend: '{name}' (ember has 'gloo' for CPU tensors and 'nccl' for CUDA)")
        return super().__new__(cls, value)


class _NonGroupMember:
    """What new_group() returns on ranks it does not include."""

    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = _NonGroupMember()


class _World:
    """The state init_process_group sets up and destroy_process_group clears."""

    def __init__(self):
        self.default_pg = None
        self.store = None          # the store every group's namespace lives in
        self.master_addr = ""
        self.timeout = default_pg_timeout
        self.group_count = 0       # new_group() calls so far (the same on every rank)
        self.ranks = {}            # ProcessGroup -> global ranks, in group-rank order
        self.backends = {}         # ProcessGroup -> backend name
        self.names = {}            # ProcessGroup -> its key namespace in the store
        self.monitored = {}        # group name -> monitored_barrier calls so far


_world = _World()


def is_available():
    """True: ember always has the distributed package (its backends may vary)."""
    return True


def is_gloo_available():
    return _D.gloo_available()


def is_nccl_available():
    return _D.nccl_available()


def is_initialized():
    return _world.default_pg is not None


def _default_backend():
    cuda = getattr(ember, "cuda", None)
    if is_nccl_available() and cuda is not None and cuda.is_available():
        return Backend.NCCL
    return Backend.GLOO


def _env(name, what):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing ember.distributed using env:// rendezvous: environment variable "
                         f"{name} expected, but not set ({what})")
    return value


def _int_env(name, what):
    value = _env(name, what)
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"Error initializing ember.distributed using env:// rendezvous: {name}={value!r} "
                         f"is not an integer") from None


def _tcp_store(host, port, rank, world_size, timeout):
    tcp_store = getattr(_D, "TCPStore", None)
    if tcp_store is None:
        raise RuntimeError("init_process_group: this ember has no TCPStore; pass store= or "
                           "init_method='file:///path'")
    try:
        return tcp_store(host, port, world_size, rank == 0, timeout)
    except RuntimeError as e:
        _reraise_as(e, DistStoreError)


def _rendezvous(init_method, rank, world_size, timeout):
    """(store, rank, world_size, master_addr) for an init_method URL."""
    url = urlparse(init_method)
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    if rank == -1 and "rank" in query:
        rank = int(query["rank"])
    if world_size == -1 and "world_size" in query:
        world_size = int(query["world_size"])
    if url.scheme == "env":
        if rank == -1:
            rank = _int_env("RANK", "this process's rank")
        if world_size == -1:
            world_size = _int_env("WORLD_SIZE", "the number of processes")
        host = _env("MASTER_ADDR", "the address of rank 0")
        port = _int_env("MASTER_PORT", "a free port on rank 0")
        _check_rank(rank, world_size)
        return _tcp_store(host, port, rank, world_size, timeout), rank, world_size, host
    if url.scheme == "tcp":
        if not url.hostname or url.port is None:
            raise ValueError(f"init_process_group: init_method {init_method!r} should be tcp://host:port")
        _check_rank(rank, world_size)
        return _tcp_store(url.hostname, url.port, rank, world_size, timeout), rank, world_size, url.hostname
    if url.scheme == "file":
        path = url.path
        if not path:
            raise ValueError(f"init_process_group: init_method {init_method!r} should be file:///path")
        _check_rank(rank, world_size)
        store = FileStore(path, world_size)
        store.timeout = timeout
        return store, rank, world_size, "127.0.0.1"
    raise ValueError(f"init_process_group: unsupported init_method {init_method!r} "
                     "(use 'env://', 'tcp://host:port' or 'file:///path')")


def _check_rank(rank, world_size):
    if world_size is None or world_size < 1:
        raise ValueError(f"init_process_group: world_size must be a positive integer, got {world_size}")
    if rank is None or not 0 <= rank < world_size:
        raise ValueError(f"init_process_group: rank {rank} is not in [0, world_size={world_size})")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Joins this process to the default group, as torch.distributed.init_process_group."""
    if is_initialized():
        raise RuntimeError("trying to initialize the default process group twice!")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(f"init_process_group: timeout must be a datetime.timedelta, got {type(timeout).__name__}")
    backend = Backend(backend) if backend is not None else _default_backend()
    if store is not None:
        if init_method is not None:
            raise ValueError("Cannot specify both init_method and store.")
        _check_rank(rank, world_size)
        master_addr = getattr(store, "host", "") or ""
    else:
        store, rank, world_size, master_addr = _rendezvous(init_method or "env://", rank, world_size, timeout)
    try:
        pg = _D.make_process_group(backend, store, rank, world_size, timeout, "default_pg", master_addr)
    except RuntimeError as e:
        _reraise_as(e, DistBackendError)
    _world.default_pg = pg
    _world.store = store
    _world.master_addr = master_addr
    _world.timeout = timeout
    _world.group_count = 0
    _world.ranks = {pg: list(range(world_size))}
    _world.backends = {pg: str(backend)}
    _world.names = {pg: "default_pg"}
    GroupMember.WORLD = pg


def destroy_process_group(group=None):
    """Forgets `group` (all groups and the store when None); its threads end when it is freed."""
    if group is None or group is GroupMember.WORLD:
        _world.__init__()
        GroupMember.WORLD = None
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    _world.ranks.pop(group, None)
    _world.backends.pop(group, None)
    _world.names.pop(group, None)


def _get_default_group():
    """The default group's C++ ProcessGroup (what DDP's reducer takes), as PyTorch's helper."""
    if _world.default_pg is None:
        raise RuntimeError(_NOT_INITIALIZED)
    return _world.default_pg


def _resolve_group(group):
    """The C++ ProcessGroup `group` stands for (None: the default group); None when this rank is not in it."""
    return _pg(group)


def _pg(group):
    """The C++ group for `group` (None: the default one); None when this rank is not a member."""
    if _world.default_pg is None:
        raise RuntimeError(_NOT_INITIALIZED)
    if group is None or group is GroupMember.WORLD:
        return _world.default_pg
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if group not in _world.ranks:
        raise ValueError("The given group is not known here (destroyed, or made by another init_process_group)")
    return group


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None):
    """A group of some ranks; every rank of the world must call it, members or not (as in PyTorch)."""
    if _world.default_pg is None:
        raise RuntimeError(_NOT_INITIALIZED)
    world_size = _world.default_pg.size()
    ranks = sorted(range(world_size) if ranks is None else ranks)
    for r in ranks:
        if not isinstance(r, int) or not 0 <= r < world_size:
            raise ValueError(f"new_group: rank {r!r} is not in [0, world_size={world_size})")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} has duplicates")
    if not ranks:
        raise ValueError("new_group: ranks must not be empty")
    _world.group_count += 1
    me = _world.default_pg.rank()
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    backend = Backend(backend) if backend is not None else _world.backends[_world.default_pg]
    timeout = timeout if timeout is not None else _world.timeout
    pg = _D.make_process_group(backend, _world.store, ranks.index(me), len(ranks), timeout,
                               f"group_{_world.group_count}", _world.master_addr)
    _world.ranks[pg] = ranks
    _world.backends[pg] = str(backend)
    _world.names[pg] = f"group_{_world.group_count}"
    return pg


def get_rank(group=None):
    """This process's rank in `group` (-1 when it is not a member)."""
    pg = _pg(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    pg = _pg(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    pg = _pg(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return _world.backends[pg]


def get_process_group_ranks(group):
    """The global ranks of `group`, in its rank order."""
    pg = _pg(group)
    if pg is None:
        raise ValueError("get_process_group_ranks: this rank is not in the group")
    return list(_world.ranks[pg])


def get_global_rank(group, group_rank):
    return get_process_group_ranks(group)[group_rank]


def get_group_rank(group, global_rank):
    return _group_rank(_pg(group), global_rank, "get_group_rank")


def _group_rank(pg, global_rank, op):
    ranks = _world.ranks[pg]
    if not isinstance(global_rank, int):
        raise TypeError(f"{op}: rank must be an int, got {type(global_rank).__name__}")
    if global_rank not in ranks:
        raise ValueError(f"{op}: global rank {global_rank} is not part of the group (its ranks are {ranks})")
    return ranks.index(global_rank)


def _peer(pg, global_rank, group_rank, op, what):
    """The group rank of a peer given as global (src/dst) or group rank (group_src/group_dst)."""
    if global_rank is not None and group_rank is not None:
        raise ValueError(f"{op}: pass only one of {what} and group_{what}")
    if group_rank is not None:
        if not isinstance(group_rank, int) or not 0 <= group_rank < pg.size():
            raise ValueError(f"{op}: group_{what} {group_rank!r} is not in [0, {pg.size()})")
        return group_rank
    return _group_rank(pg, 0 if global_rank is None else global_rank, op)


def _check_tensor(t, op, name="tensor"):
    if not isinstance(t, ember.Tensor):
        raise TypeError(f"{op}: {name} must be an ember.Tensor, got {type(t).__name__}")


def _check_tensor_list(ts, op, name):
    if not isinstance(ts, (list, tuple)):
        raise TypeError(f"{op}: {name} must be a list of ember.Tensor, got {type(ts).__name__}")
    for t in ts:
        _check_tensor(t, op, f"every element of {name}")


def _check_op(op, name):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{name}: op must be an ember.distributed.ReduceOp, got {op!r}")


def _reraise_as(error, cls):
    """Raises `error` as `cls` (a DistError) when it is a plain RuntimeError, else unchanged."""
    new = as_dist_error(error, cls)
    if new is error:
        raise error
    raise new from error


def _finish(work, async_op):
    if async_op:
        return work
    try:
        work.wait()
    except RuntimeError as e:
        # The backend's failure (a peer died, the timeout passed) as torch's DistBackendError,
        # still a RuntimeError; ValueError/TypeError/NotImplementedError pass unchanged.
        _reraise_as(e, DistBackendError)
    return None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces `tensor` across the group in place; every rank gets the result."""
    _check_tensor(tensor, "all_reduce")
    _check_op(op, "all_reduce")
    pg = _pg(group)
    if pg is None:
        return None
    return _finish(pg.all_reduce(tensor, op), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor, "broadcast")
    pg = _pg(group)
    if pg is None:
        return None
    root = _peer(pg, src, group_src, "broadcast", "src")
    return _finish(pg.broadcast(tensor, root), async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduces `tensor` across the group; only rank `dst` gets the result."""
    _check_tensor(tensor, "reduce")
    _check_op(op, "reduce")
    pg = _pg(group)
    if pg is None:
        return None
    root = _peer(pg, dst, group_dst, "reduce", "dst")
    return _finish(pg.reduce(tensor, root, op), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_tensor_list(tensor_list, "all_gather", "tensor_list")
    _check_tensor(tensor, "all_gather")
    pg = _pg(group)
    if pg is None:
        return None
    return _finish(pg.all_gather(list(tensor_list), tensor), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _check_tensor(output_tensor, "all_gather_into_tensor", "output_tensor")
    _check_tensor(input_tensor, "all_gather_into_tensor", "input_tensor")
    pg = _pg(group)
    if pg is None:
        return None
    return _finish(pg.all_gather_into_tensor(output_tensor, input_tensor), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "reduce_scatter_tensor", "output")
    _check_tensor(input, "reduce_scatter_tensor", "input")
    _check_op(op, "reduce_scatter_tensor")
    pg = _pg(group)
    if pg is None:
        return None
    return _finish(pg.reduce_scatter_tensor(output, input, op), async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor, "gather")
    pg = _pg(group)
    if pg is None:
        return None
    root = _peer(pg, dst, group_dst, "gather", "dst")
    if pg.rank() == root:
        if gather_list is None:
            raise ValueError("gather: gather_list must be specified on the destination rank")
        _check_tensor_list(gather_list, "gather", "gather_list")
    elif gather_list:
        raise ValueError("gather: gather_list must NOT be specified on non-destination ranks")
    return _finish(pg.gather(list(gather_list or []), tensor, root), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor, "scatter")
    pg = _pg(group)
    if pg is None:
        return None
    root = _peer(pg, src, group_src, "scatter", "src")
    if pg.rank() == root:
        if scatter_list is None:
            raise ValueError("scatter: scatter_list must be specified on the source rank")
        _check_tensor_list(scatter_list, "scatter", "scatter_list")
    elif scatter_list:
        raise ValueError("scatter: scatter_list must NOT be specified on non-source ranks")
    return _finish(pg.scatter(tensor, list(scatter_list or []), root), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    pg = _pg(group)
    if pg is None:
        return None
    return _finish(pg.barrier(), async_op)


def _p2p(op, tensor, peer, group, tag, group_peer, what):
    _check_tensor(tensor, op)
    if not isinstance(tag, int):
        raise TypeError(f"{op}: tag must be an int, got {type(tag).__name__}")
    pg = _pg(group)
    if pg is None:
        return None, None
    if peer is None and group_peer is None:
        if what == "src":
            raise NotImplementedError(f"{op}: receiving from any source is not supported; pass src")
        raise ValueError(f"{op}: dst must be given")
    return pg, _peer(pg, peer, group_peer, op, what)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Sends `tensor` to rank `dst`; returns a Work (None when this rank is not in `group`)."""
    pg, peer = _p2p("isend", tensor, dst, group, tag, group_dst, "dst")
    return None if pg is None else pg.send(tensor, peer, tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    pg, peer = _p2p("irecv", tensor, src, group, tag, group_src, "src")
    return None if pg is None else pg.recv(tensor, peer, tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    pg, peer = _p2p("send", tensor, dst, group, tag, group_dst, "dst")
    if pg is not None:
        pg.send(tensor, peer, tag).wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receives into `tensor` from rank `src`; returns the sender's global rank (-1 outside `group`)."""
    pg, peer = _p2p("recv", tensor, src, group, tag, group_src, "src")
    if pg is None:
        return -1
    pg.recv(tensor, peer, tag).wait()
    return _world.ranks[pg][peer]


class group:
    """dist.group.WORLD, as in PyTorch."""
    WORLD = property(lambda self: GroupMember.WORLD)


group = group()


# ---- Python objects, pickled into uint8 tensors (as torch.distributed does)

def _to_bytes_tensor(obj):
    import pickle

    import numpy as np
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8).copy()
    return ember.from_numpy(data), len(data)


def _from_bytes_tensor(t, size):
    import pickle
    return pickle.loads(t[:size].numpy().tobytes())


def _wait_on_backend_device(pg, call, *tensors):
    """call(*tensors).wait(); for NCCL on copies on the current GPU (as PyTorch
    does), written back into the CPU tensors after."""
    if _world.backends.get(pg) != "nccl":
        call(*tensors).wait()
        return
    device = f"cuda:{ember.cuda.current_device()}"
    moved = [t.to(device) for t in tensors]
    call(*moved).wait()
    for t, m in zip(tensors, moved):
        t.copy_(m.cpu())


def all_gather_object(object_list, obj, group=None):
    """Fills object_list[i] with rank i's `obj` (any picklable object)."""
    pg = _pg(group)
    if pg is None:
        return
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list has {len(object_list)} entries, expected the group "
                         f"size {pg.size()}")
    data, size = _to_bytes_tensor(obj)
    sizes = ember.zeros(pg.size(), dtype=ember.int64)
    _wait_on_backend_device(pg, pg.all_gather_into_tensor, sizes, ember.tensor([size], dtype=ember.int64))
    sizes = [int(s) for s in sizes.tolist()]
    longest = max(sizes)
    padded = ember.zeros(longest, dtype=ember.uint8)
    padded[:size] = data
    out = ember.zeros(pg.size() * longest, dtype=ember.uint8)
    _wait_on_backend_device(pg, pg.all_gather_into_tensor, out, padded)
    for r in range(pg.size()):
        object_list[r] = _from_bytes_tensor(out[r * longest:(r + 1) * longest], sizes[r])


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replaces every entry of object_list with rank src's entries (picklable objects)."""
    pg = _pg(group)
    if pg is None:
        return
    root = _peer(pg, src, group_src, "broadcast_object_list", "src")
    n = len(object_list)
    if pg.rank() == root:
        parts = [_to_bytes_tensor(o) for o in object_list]
        sizes = ember.tensor([s for _, s in parts] or [0], dtype=ember.int64)[:n]
    else:
        sizes = ember.zeros(n, dtype=ember.int64)
    _wait_on_backend_device(pg, lambda t: pg.broadcast(t, root), sizes)
    sizes = [int(s) for s in sizes.tolist()]
    payload = ember.zeros(sum(sizes), dtype=ember.uint8)
    if pg.rank() == root and sizes:
        payload = ember.cat([t for t, _ in parts])
    _wait_on_backend_device(pg, lambda t: pg.broadcast(t, root), payload)
    if pg.rank() != root:
        offset = 0
        for i, s in enumerate(sizes):
            object_list[i] = _from_bytes_tensor(payload[offset:offset + s], s)
            offset += s
