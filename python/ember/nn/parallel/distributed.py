"""DistributedDataParallel, as torch.nn.parallel.DistributedDataParallel.

Each process holds a replica of the module and trains on its share of the
batch. At construction rank 0's parameters and buffers are broadcast to every
rank; during backward a C++ reducer (ember._C._distributed.Reducer, see
distributed/reducer.h) all-reduces the gradients in buckets as backward
produces them, so at the end of backward every replica holds the same
averaged gradients and the optimizers take the same step.

Unused parameters: with find_unused_parameters=False, a parameter that gets
no gradient makes loss.backward() itself raise, naming the parameter (PyTorch
raises at the next forward; raising where the problem happens is clearer).

Uneven inputs: `with ddp.join():` lets ranks run different numbers of
iterations (DDP is a Joinable; see ddp_join.py).
"""
from contextlib import contextmanager

import ember
from ember import _C
from ember.distributed.algorithms.join import Join, Joinable
from ember.nn.modules.module import Module
from ember.nn.parallel import ddp_join

_MiB = 1024 * 1024
_DEFAULT_FIRST_BUCKET_BYTES = _MiB  # a small first bucket starts communication early, as in PyTorch


def _dist():
    import ember.distributed as dist  # imported late: ember.nn loads before ember.distributed
    return dist


def _group_by_dtype(tensors):
    groups = {}
    for t in tensors:
        groups.setdefault((t.dtype, str(t.device)), []).append(t)
    return list(groups.values())


def _broadcast_coalesced(tensors, group, src=0):
    """Broadcasts `tensors` from group rank `src`: one flat message per dtype and device."""
    dist = _dist()
    with ember.no_grad():
        for same in _group_by_dtype(tensors):
            flat = ember.cat([t.detach().reshape(-1) for t in same])
            dist.broadcast(flat, group=group, group_src=src)
            offset = 0
            for t in same:
                n = t.numel()
                t.copy_(flat[offset:offset + n].view(t.shape))
                offset += n


def _dtype_code(dtype):
    """A number for a dtype, the same in every process (hash() of a str is not)."""
    return sum((i + 1) * ord(c) for i, c in enumerate(str(dtype)))


def _verify_same_parameters(named, group):
    """Checks that every rank wraps parameters of the same shapes and dtypes
    as rank 0, so that a mismatch raises here on every rank instead of
    corrupting or hanging a later collective."""
    dist = _dist()
    device = named[0][1].device if named else None  # NCCL moves GPU tensors only
    signature = []
    for _, p in named:
        signature += [len(p.shape), *p.shape, _dtype_code(p.dtype)]
    length = ember.tensor([len(signature)], dtype=ember.int64, device=device)
    dist.broadcast(length, group=group, group_src=0)
    theirs = ember.tensor(signature if group.rank() == 0 else [0] * int(length.item()), dtype=ember.int64,
                          device=device)
    dist.broadcast(theirs, group=group, group_src=0)
    theirs = theirs.tolist()
    differs = theirs != signature
    flag = ember.tensor([int(differs)], dtype=ember.int64, device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=group)
    if not flag.item():
        return
    where = "; another rank's differ from this one's"
    if differs:
        at = 0
        for name, p in named:
            n = 2 + len(p.shape)
            if theirs[at:at + n] != signature[at:at + n]:
                where = f"; here {name} has shape {list(p.shape)} and dtype {p.dtype}, unlike rank 0's"
                break
            at += n
        else:
            where = f"; rank 0 has more parameters than the {len(named)} here"
    raise RuntimeError(f"DistributedDataParallel: the module's parameters differ across ranks (rank "
                       f"{group.rank()}{where}). Every rank must wrap the same model.")


class DistributedDataParallel(Module, Joinable):
    """Data parallelism across processes; see the module docstring."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        Joinable.__init__(self)
        dist = _dist()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be an ember.nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("DistributedDataParallel: device_ids can only be None or contain a single element "
                             "(one device per process)")
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        devices = {p.device.type for _, p in named}
        if device_ids is not None and devices == {"cpu"}:
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             f"single-device GPU modules, but got device_ids {device_ids}, output_device "
                             f"{output_device}, and module parameters {devices}.")
        if bucket_cap_mb is None:
            bucket_cap_mb = 25
        if bucket_cap_mb <= 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be positive, got {bucket_cap_mb}")

        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.process_group = (process_group if process_group is not None
                              else dist.distributed_c10d._get_default_group())
        self.bucket_bytes_cap = int(bucket_cap_mb * _MiB)

        _verify_same_parameters(named, self.process_group)
        # Every replica starts from rank 0's state.
        _broadcast_coalesced([p for _, p in module.named_parameters()] + list(module.buffers()),
                             self.process_group)
        self._divide_by_initial_world_size = True
        self._rescale = None  # ddp_join's pending gradient rescale
        self._reducer_params = [p for _, p in named]
        self._reducer = _C._distributed.Reducer(
            self._reducer_params, self.process_group,
            bucket_cap_bytes=self.bucket_bytes_cap,
            first_bucket_cap_bytes=min(_DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap),
            find_unused_parameters=find_unused_parameters,
            gradient_as_bucket_view=gradient_as_bucket_view,
            names=[n for n, _ in named])

    def forward(self, *inputs, **kwargs):
        joining = self._join_config.enable
        active = ddp_join.active_rank_count(self) if joining else None
        if self._syncs_buffers():
            # Under join, rank 0 may have run out of data: the highest active rank's buffers win.
            self._sync_buffers(ddp_join.find_common_rank(self, True) if joining else 0)
        will_sync = ember.is_grad_enabled() and self.require_backward_grad_sync
        if joining:
            ddp_join.agree_on_backward_sync(self, will_sync)
        output = self.module(*inputs, **kwargs)
        if will_sync:
            # The graph is walked for unused parameters only when asked to.
            self._reducer.prepare_for_backward(output if self.find_unused_parameters else [])
            if self._rescale is not None or (active is not None and not self._divide_by_initial_world_size):
                ddp_join.rescale_after_backward(self, None if self._divide_by_initial_world_size else active)
        return output

    def _syncs_buffers(self):
        return self.broadcast_buffers and any(True for _ in self.module.buffers())

    def _sync_buffers(self, src):
        _broadcast_coalesced(list(self.module.buffers()), self.process_group, src)

    def _broadcast_states(self, tensors, src):
        _broadcast_coalesced(tensors, self.process_group, src)

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """A Join context for uneven inputs with this model as the only
        joinable: ranks that run out of data shadow the others' collectives
        until all have; see ddp_join.py. Gradients are averaged over the
        initial world size (divide_by_initial_world_size=True, as if joined
        ranks contributed zeros) or over the ranks still active."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return ddp_join._DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self._reducer_params[0].device

    @property
    def join_process_group(self):
        return self.process_group

    @contextmanager
    def no_sync(self):
        """Backward passes inside accumulate gradients locally, without
        communication; the first synchronized backward after reduces them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
