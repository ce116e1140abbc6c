"""torch.distributed collectives beyond the core set: all_to_all(_single),
reduce_scatter over a list, batched point-to-point (P2POp, batch_isend_irecv)
and monitored_barrier. They build on the C++ groups' collectives; list forms
flatten into one buffer and copy back once the collective has finished."""
import time
from datetime import timedelta

import ember
from ember.distributed import distributed_c10d as c10d
from ember.distributed.distributed_c10d import ReduceOp, _check_op, _check_tensor, _check_tensor_list, _finish, _pg
from ember.distributed.errors import DistBackendError


class _WorkThen:
    """A Work whose wait() also runs `then` once (copies a flat result back into a list)."""

    def __init__(self, work, then):
        self._work = work
        self._then = then

    def wait(self, timeout=None):
        self._work.wait()
        if self._then is not None:
            then, self._then = self._then, None
            then()
        return True

    def is_completed(self):
        return self._then is None or self._work.is_completed()


def _finish_then(work, then, async_op):
    w = _WorkThen(work, then)
    if async_op:
        return w
    _finish(work, False)
    w.wait()
    return None


def _same_dtype(tensors, op, what):
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise TypeError(f"{op}: every tensor of {what} must have the same dtype, got {sorted(map(str, dtypes))}")


def _flat(tensors, dtype, device):
    with ember.no_grad():
        if not tensors:
            return ember.empty(0, dtype=dtype, device=device)
        return ember.cat([t.detach().reshape(-1) for t in tensors])


def _copy_out(flat, outputs):
    with ember.no_grad():
        offset = 0
        for o in outputs:
            n = o.numel()
            o.copy_(flat[offset:offset + n].view(o.shape))
            offset += n


def _splits(sizes):
    """Split sizes as a list of ints ([]: equal parts)."""
    return [] if sizes is None else [int(s) for s in sizes]


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Cuts `input` along dim 0 into world_size parts (input_split_sizes rows each, or equal parts),
    sends part r to rank r, and fills `output`'s parts (output_split_sizes) with what each rank sent."""
    _check_tensor(output, "all_to_all_single", "output")
    _check_tensor(input, "all_to_all_single", "input")
    pg = _pg(group)
    if pg is None:
        return None
    work = pg.all_to_all(output, input, _splits(output_split_sizes), _splits(input_split_sizes))
    return _finish(work, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Sends input_tensor_list[r] to rank r; output_tensor_list[r] receives rank r's tensor for this rank."""
    op = "all_to_all"
    _check_tensor_list(output_tensor_list, op, "output_tensor_list")
    _check_tensor_list(input_tensor_list, op, "input_tensor_list")
    pg = _pg(group)
    if pg is None:
        return None
    n = pg.size()
    for name, ts in (("output_tensor_list", output_tensor_list), ("input_tensor_list", input_tensor_list)):
        if len(ts) != n:
            raise ValueError(f"{op}: {name} has {len(ts)} tensors, expected world_size ({n})")
    _same_dtype(list(output_tensor_list) + list(input_tensor_list), op, "both lists")
    outputs = list(output_tensor_list)
    dtype, device = outputs[0].dtype, outputs[0].device
    flat_in = _flat(list(input_tensor_list), dtype, device)
    flat_out = ember.empty(sum(o.numel() for o in outputs), dtype=dtype, device=device)
    work = pg.all_to_all(flat_out, flat_in, [o.numel() for o in outputs], [t.numel() for t in input_tensor_list])
    return _finish_then(work, lambda: _copy_out(flat_out, outputs), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces input_list[r] across the group into rank r's `output`."""
    name = "reduce_scatter"
    _check_tensor(output, name, "output")
    _check_tensor_list(input_list, name, "input_list")
    _check_op(op, name)
    pg = _pg(group)
    if pg is None:
        return None
    if len(input_list) != pg.size():
        raise ValueError(f"{name}: input_list has {len(input_list)} tensors, expected world_size ({pg.size()})")
    for t in input_list:
        if t.numel() != output.numel():
            raise ValueError(f"{name}: an input of shape {list(t.shape)} does not match the output of shape "
                             f"{list(output.shape)}")
    _same_dtype([output, *input_list], name, "output and input_list")
    flat = _flat(list(input_list), output.dtype, output.device)
    return _finish(pg.reduce_scatter_tensor(output, flat, op), async_op)


# ---- batched point-to-point

class P2POp:
    """One send or receive for batch_isend_irecv: op is ember.distributed.isend or irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (c10d.isend, c10d.irecv, c10d.send, c10d.recv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``ember.distributed.isend`` or "
                             "``ember.distributed.irecv``.")
        _check_tensor(tensor, "P2POp")
        if peer is None and group_peer is None:
            raise ValueError("P2POp: pass peer (a global rank) or group_peer")
        if not isinstance(tag, int):
            raise TypeError(f"P2POp: tag must be an int, got {type(tag).__name__}")
        self.op = op
        self.tensor = tensor
        self.peer = peer
        self.group = group
        self.tag = tag
        self.group_peer = group_peer

    @property
    def is_send(self):
        return self.op in (c10d.isend, c10d.send)

    def __repr__(self):
        return f"P2POp(op={self.op.__name__}, peer={self.peer}, tag={self.tag}, shape={list(self.tensor.shape)})"


def batch_isend_irecv(p2p_op_list):
    """Posts every P2POp of the list at once (grouped on NCCL, so no order of sends and
    receives across the ranks deadlocks); returns their Works to wait on."""
    if not isinstance(p2p_op_list, (list, tuple)) or not p2p_op_list:
        raise ValueError("batch_isend_irecv: p2p_op_list must be a non-empty list of P2POp")
    if not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise TypeError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                        "``ember.distributed.P2POp``.")
    group = p2p_op_list[0].group
    if any(p.group is not group for p in p2p_op_list):
        raise ValueError("batch_isend_irecv: all ops need to use the same group")
    pg = _pg(group)
    if pg is None:
        return []
    messages = []
    for p in p2p_op_list:
        peer = c10d._peer(pg, p.peer, p.group_peer, "batch_isend_irecv", "peer")
        messages.append((p.is_send, p.tensor, peer, p.tag))
    return pg.batch_send_recv(messages)


# ---- monitored_barrier: through the store, so it can name who is missing

def _ms(timeout):
    return int(timeout.total_seconds() * 1000)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks which did not arrive within `timeout`: rank 0 of the group
    waits for every other rank's check-in in the store, then tells them all whether everyone came."""
    pg = _pg(group)
    if pg is None:
        return
    if timeout is None:
        timeout = c10d._world.timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(f"monitored_barrier: timeout must be a datetime.timedelta, got {type(timeout).__name__}")
    world = c10d._world
    name = world.names[pg]
    call = world.monitored.get(name, 0)
    world.monitored[name] = call + 1
    prefix = f"monitored_barrier/{name}/{call}/"
    store, ranks, me = world.store, world.ranks[pg], pg.rank()
    if me != 0:
        store.set(prefix + f"arrived/{me}", "1")
        try:
            # Rank 0 answers within its own timeout; a margin covers the time it takes to answer.
            store.wait([prefix + "result"], timeout * 2 + timedelta(seconds=1))
        except RuntimeError:
            raise DistBackendError(f"monitored_barrier: rank {ranks[me]} got no answer from rank {ranks[0]} "
                                   f"(the group's rank 0) within {_ms(timeout)} ms; it may have exited") from None
        result = store.get(prefix + "result")
        result = result.decode() if isinstance(result, bytes) else str(result)
        if result != "ok":
            raise DistBackendError(result)
        return
    deadline = time.monotonic() + timeout.total_seconds()
    missing = []
    for r in range(1, pg.size()):
        key = prefix + f"arrived/{r}"
        left = deadline - time.monotonic()
        if missing or left <= 0:
            arrived = store.check([key])
        else:
            try:
                store.wait([key], timedelta(seconds=left))
                arrived = True
            except RuntimeError:
                arrived = store.check([key])
        if not arrived:
            missing.append(ranks[r])
            if not wait_all_ranks:
                break
    if not missing:
        store.set(prefix + "result", "ok")
        return
    if len(missing) == 1:
        msg = f"Rank {missing[0]} failed to pass monitoredBarrier in {_ms(timeout)} ms"
    else:
        msg = f"Ranks {', '.join(map(str, missing))} failed to pass monitoredBarrier in {_ms(timeout)} ms"
    store.set(prefix + "result", msg)
    raise DistBackendError(msg)
