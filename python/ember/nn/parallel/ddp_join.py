"""DistributedDataParallel's part in ember.distributed.algorithms.Join:
what an active rank adds to each forward, and the JoinHook with which a rank
that ran out of data shadows it.

Per iteration, an active rank issues, in this order:
  1. the count of active ranks (Join.notify_join_context),
  2. if broadcast_buffers and the module has buffers: an all-reduce (MAX)
     choosing the highest active rank, then the broadcast of its buffers
     (rank 0 may have joined and hold stale ones),
  3. an all-reduce telling joined ranks whether backward will reduce
     gradients this iteration (0 under no_sync or no_grad),
  4. in backward: the reducer's bucket all-reduces, then (with
     find_unused_parameters) its all-reduce of which parameters were used.
A joined rank issues 2-4 from _DDPJoinHook.main_hook, with -1 for its rank,
its stale buffers, 0 for "will sync" and zero-filled buckets of the same
dtypes, sizes and order; Join itself issues 1. At the end the final model is
broadcast from the highest rank among the last to join.
"""
import ember
from ember import _C
from ember.distributed.algorithms.join import Join, JoinHook


def _dist():
    import ember.distributed as dist
    return dist


def find_common_rank(ddp, candidate):
    """The highest group rank among those where `candidate` is true."""
    dist = _dist()
    rank = ember.tensor([ddp.process_group.rank() if candidate else -1], dtype=ember.int64,
                        device=ddp.join_device)
    dist.all_reduce(rank, op=dist.ReduceOp.MAX, group=ddp.process_group)
    rank = int(rank.item())
    if rank < 0:
        raise RuntimeError("DistributedDataParallel.join: no rank qualified as the source of the model state "
                           "(a bug in ember)")
    return rank


def agree_on_backward_sync(ddp, will_sync):
    """Step 3: returns whether any active rank reduces gradients this iteration."""
    flag = ember.tensor([1.0 if will_sync else 0.0], device=ddp.join_device)
    _dist().all_reduce(flag, group=ddp.process_group)
    return flag.item() != 0


def active_rank_count(ddp):
    """Step 1 on an active rank: the number of ranks still training, or None
    when DDP is not the first joinable (then the reducer's world-size
    division stands, as in PyTorch)."""
    work = Join.notify_join_context(ddp)
    if work is None:
        return None
    return int(work.result()[0].item())


def _grad_state(grad):
    return None if grad is None else (grad.data_ptr(), grad._version)


class _RescaleAfterBackward:
    """divide_by_initial_world_size=False: the reducer averages over the
    initial world size; multiplying its result by world/active divides the
    sum by the number of active ranks instead. The multiplication runs as a
    backward-final callback queued behind the reducer's own (which writes
    the averaged gradients), and touches only the gradients the reducer
    wrote: every locally used parameter's, and a locally unused one's only if
    it changed (some other rank used it)."""

    def __init__(self, ddp, factor):
        self.ddp = ddp
        self.factor = factor
        self.params = ddp._reducer_params
        self.before = [_grad_state(p.grad) for p in self.params]
        self.queued = False
        self.handles = [p.register_post_accumulate_grad_hook(self._on_gradient) for p in self.params]

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []

    def _on_gradient(self, _):
        if self.queued:
            return
        self.queued = True
        # Queued from a callback, the work runs after every callback queued
        # during backward, the reducer's included, whatever the hook order.
        _C._queue_callback(lambda: _C._queue_callback(self._rescale))

    def _rescale(self):
        self.remove()
        if self.ddp._rescale is self:
            self.ddp._rescale = None
        unused = set(self.ddp._reducer._unused_parameters())
        with ember.no_grad():
            for i, p in enumerate(self.params):
                g = p.grad
                if g is None or (i in unused and _grad_state(g) == self.before[i]):
                    continue
                g.mul_(self.factor)


def rescale_after_backward(ddp, active):
    """Arms the rescale for the coming backward when `active` (None: no
    rescale) is below the world size. A rescale armed by an earlier forward
    whose backward never ran is dropped first, so it cannot hit a later
    backward, inside the join or after it."""
    if ddp._rescale is not None:
        ddp._rescale.remove()
        ddp._rescale = None
    if active is not None and active != ddp.process_group.size():
        ddp._rescale = _RescaleAfterBackward(ddp, ddp.process_group.size() / active)


class _DDPJoinHook(JoinHook):
    """Shadows one DDP iteration on a joined rank; see the module docstring."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size
        self._zero_buckets = None

    def main_hook(self):
        ddp = self.ddp
        if ddp._syncs_buffers():
            ddp._sync_buffers(find_common_rank(ddp, False))
        if not agree_on_backward_sync(ddp, False):
            return
        self._shadow_reduction()

    def _shadow_reduction(self):
        ddp, dist = self.ddp, _dist()
        params = ddp._reducer_params
        if self._zero_buckets is None:
            self._zero_buckets = [ember.zeros(sum(params[i].numel() for i in bucket), dtype=params[bucket[0]].dtype,
                                              device=params[bucket[0]].device)
                                  for bucket in ddp._reducer._bucket_indices()]
        works = []
        for zeros in self._zero_buckets:
            zeros.zero_()  # the all-reduce leaves the active ranks' sum in it
            works.append(dist.all_reduce(zeros, group=ddp.process_group, async_op=True))
        for work in works:
            work.wait()
        if ddp.find_unused_parameters:
            used = ember.zeros(len(params), dtype=ember.float32, device=params[0].device)
            dist.all_reduce(used, group=ddp.process_group)

    def post_hook(self, is_last_joiner):
        ddp = self.ddp
        rescale_after_backward(ddp, None)  # nothing pending may outlive the join
        src = find_common_rank(ddp, is_last_joiner)
        states = list(ddp.module.parameters())
        if ddp.broadcast_buffers:
            states += list(ddp.module.buffers())
        ddp._broadcast_states(states, src)
