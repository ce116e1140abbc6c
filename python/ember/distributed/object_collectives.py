"""gather_object, scatter_object_list, send_object_list and recv_object_list:
picklable Python objects carried as uint8 tensors (the serialization of
all_gather_object / broadcast_object_list). Sizes travel first, then the
payloads padded to the longest; on NCCL the buffers live on the current GPU."""
import ember
from ember.distributed import distributed_c10d as c10d
from ember.distributed.distributed_c10d import _from_bytes_tensor, _peer, _pg, _to_bytes_tensor


def _device(pg, device=None):
    if c10d._world.backends.get(pg) != "nccl":
        return "cpu"
    return device if device is not None else f"cuda:{ember.cuda.current_device()}"


def _padded(data, size, length, device):
    buf = ember.zeros(length, dtype=ember.uint8)
    if size:
        buf[:size] = data
    return buf.to(device)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Rank dst gets every rank's `obj` in object_gather_list (one entry per rank)."""
    pg = _pg(group)
    if pg is None:
        return
    root = _peer(pg, dst, group_dst, "gather_object", "dst")
    me, n = pg.rank(), pg.size()
    if me == root:
        if object_gather_list is None:
            raise ValueError("gather_object: object_gather_list must be specified on the destination rank")
        if len(object_gather_list) != n:
            raise ValueError(f"gather_object: object_gather_list has {len(object_gather_list)} entries, expected "
                             f"the group size {n}")
    dev = _device(pg)
    data, size = _to_bytes_tensor(obj)
    sizes = ember.zeros(n, dtype=ember.int64, device=dev)
    pg.all_gather_into_tensor(sizes, ember.tensor([size], dtype=ember.int64).to(dev)).wait()
    sizes = [int(s) for s in sizes.cpu().tolist()]
    longest = max(sizes)
    outs = [ember.zeros(longest, dtype=ember.uint8, device=dev) for _ in range(n)] if me == root else []
    pg.gather(outs, _padded(data, size, longest, dev), root).wait()
    if me == root:
        for r in range(n):
            object_gather_list[r] = _from_bytes_tensor(outs[r].cpu(), sizes[r])


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """scatter_object_output_list[0] on rank r becomes scatter_object_input_list[r] of rank src."""
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    pg = _pg(group)
    if pg is None:
        return
    root = _peer(pg, src, group_src, "scatter_object_list", "src")
    me, n = pg.rank(), pg.size()
    dev = _device(pg)
    if me == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != n:
            got = None if scatter_object_input_list is None else len(scatter_object_input_list)
            raise ValueError(f"scatter_object_list: scatter_object_input_list must have one object per rank "
                             f"({n}) on the source rank, got {got}")
        parts = [_to_bytes_tensor(o) for o in scatter_object_input_list]
        longest = ember.tensor([max(s for _, s in parts)], dtype=ember.int64).to(dev)
    else:
        longest = ember.zeros(1, dtype=ember.int64, device=dev)
    pg.broadcast(longest, root).wait()
    length = int(longest.cpu().item())
    my_size = ember.zeros(1, dtype=ember.int64, device=dev)
    size_inputs = [ember.tensor([s], dtype=ember.int64).to(dev) for _, s in parts] if me == root else []
    pg.scatter(my_size, size_inputs, root).wait()
    payload = ember.zeros(length, dtype=ember.uint8, device=dev)
    inputs = [_padded(t, s, length, dev) for t, s in parts] if me == root else []
    pg.scatter(payload, inputs, root).wait()
    scatter_object_output_list[0] = _from_bytes_tensor(payload.cpu(), int(my_size.cpu().item()))


def _p2p_peer(pg, peer, group_peer, op, what):
    if peer is None and group_peer is None:
        raise ValueError(f"{op}: {what} must be given")
    return _peer(pg, peer, group_peer, op, what)


def send_object_list(object_list, dst=None, group=None, device=None, group_dst=None):
    """Sends the picklable objects of object_list to rank dst (which calls recv_object_list)."""
    pg = _pg(group)
    if pg is None:
        return
    peer = _p2p_peer(pg, dst, group_dst, "send_object_list", "dst")
    dev = _device(pg, device)
    parts = [_to_bytes_tensor(o) for o in object_list]
    sizes = ember.tensor([s for _, s in parts] or [0], dtype=ember.int64)[:len(parts)].to(dev)
    pg.send(sizes, peer, 0).wait()
    if parts:
        pg.send(ember.cat([t for t, _ in parts]).to(dev), peer, 0).wait()


def recv_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Fills object_list with the objects rank src sent (as many as object_list has entries);
    returns the sender's global rank."""
    pg = _pg(group)
    if pg is None:
        return -1
    peer = _p2p_peer(pg, src, group_src, "recv_object_list", "src")
    dev = _device(pg, device)
    sizes = ember.zeros(len(object_list), dtype=ember.int64, device=dev)
    pg.recv(sizes, peer, 0).wait()
    sizes = [int(s) for s in sizes.cpu().tolist()]
    if sizes:
        payload = ember.zeros(sum(sizes), dtype=ember.uint8, device=dev)
        pg.recv(payload, peer, 0).wait()
        payload = payload.cpu()
        offset = 0
        for i, s in enumerate(sizes):
            object_list[i] = _from_bytes_tensor(payload[offset:offset + s], s)
            offset += s
    return c10d._world.ranks[pg][peer]
