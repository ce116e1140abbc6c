"""The torch.distributed surface beyond the core collectives: all_to_all(_single),
reduce_scatter over a list, object collectives, batch_isend_irecv, monitored_barrier,
the DistError classes and the launcher/environment helpers.

Multi-rank tests start fresh interpreters running WORKER on loopback (a FileStore
rendezvous, short timeouts); a worker checks its results itself and exits
non-zero with its traceback on a mismatch.
"""
import os
import subprocess
import sys
import textwrap
from datetime import timedelta

import numpy as np
import pytest

import ember
import ember.distributed as dist
from ranks import collect, require_ok

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(),
                                reason="ember was built without gloo (install libgloo-dev and rebuild)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKER = textwrap.dedent(r'''
    import os, sys, time
    from datetime import timedelta
    import numpy as np
    import ember
    import ember.distributed as dist

    scenario, rank, world, init_method = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    timeout = timedelta(seconds=float(os.environ.get("PG_TIMEOUT", "20")))
    dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world, timeout=timeout)

    def expect(got, want, what):
        got = got.numpy() if isinstance(got, ember.Tensor) else np.asarray(got)
        if got.shape != np.shape(want) or not np.array_equal(got, want):
            raise AssertionError(f"rank {rank}: {what}: got {got.tolist()}, expected {np.asarray(want).tolist()}")

    def raises(exc, text, fn):
        try:
            fn()
        except exc as e:
            assert text in str(e), f"rank {rank}: {text!r} not in {e!r}"
            return e
        raise AssertionError(f"rank {rank}: expected {exc.__name__} with {text!r}")

    def alltoall():
        # even split: rank r sends row block j (2 rows) to rank j; values name (sender, receiver)
        x = ember.tensor([[10 * rank + j] * 3 for j in range(world) for _ in range(2)], dtype=ember.float32)
        out = ember.full((2 * world, 3), -1.0)
        dist.all_to_all_single(out, x)
        expect(out, np.array([[10 * s + rank] * 3 for s in range(world) for _ in range(2)], np.float32),
               "all_to_all_single even")
        # uneven: rank r sends (r + j + 1) int64 elements to rank j
        in_splits = [rank + j + 1 for j in range(world)]
        out_splits = [s + rank + 1 for s in range(world)]
        x = ember.cat([ember.full((n,), 100 * rank + j, dtype=ember.int64) for j, n in enumerate(in_splits)])
        out = ember.zeros(sum(out_splits), dtype=ember.int64)
        dist.all_to_all_single(out, x, output_split_sizes=out_splits, input_split_sizes=in_splits)
        expect(out, np.concatenate([np.full(n, 100 * s + rank) for s, n in enumerate(out_splits)]),
               "all_to_all_single uneven")
        # a rank that sends nothing to anyone but itself (zero splits), async
        zeros = [0] * world
        zeros[rank] = 1
        out = ember.zeros(1)
        work = dist.all_to_all_single(out, ember.tensor([float(rank)]), zeros, zeros, async_op=True)
        work.wait()
        expect(out, [float(rank)], "all_to_all_single with empty parts")
        # a non-contiguous output gets the result written back
        base = ember.zeros(3, world)
        dist.all_to_all_single(base.t(), ember.full((world, 3), float(rank)))
        expect(base, np.tile(np.arange(world, dtype=np.float32), (3, 1)), "all_to_all_single into a view")
        # lists of different shapes: rank r sends rank j a (j+1, r+1) tensor
        ins = [ember.full((j + 1, rank + 1), float(rank * world + j)) for j in range(world)]
        outs = [ember.zeros(rank + 1, s + 1) for s in range(world)]
        dist.all_to_all(outs, ins)
        for s in range(world):
            expect(outs[s], np.full((rank + 1, s + 1), float(s * world + rank), np.float32), f"all_to_all from {s}")
        outs = [ember.zeros(2) for _ in range(world)]
        w = dist.all_to_all(outs, [ember.full((2,), float(rank)) for _ in range(world)], async_op=True)
        w.wait()
        for s in range(world):
            expect(outs[s], [float(s)] * 2, "async all_to_all")
        # reduce_scatter over a list: rank r contributes r + j to chunk j
        out = ember.zeros(2)
        dist.reduce_scatter(out, [ember.full((2,), float(rank + j)) for j in range(world)])
        expect(out, [float(sum(s + rank for s in range(world)))] * 2, "reduce_scatter")
        out = ember.zeros(1)
        dist.reduce_scatter(out, [ember.tensor([rank + 1.0]) for _ in range(world)], op=dist.ReduceOp.MAX)
        expect(out, [float(world)], "reduce_scatter MAX")

    def objects():
        gathered = [None] * world if rank == 1 else None
        dist.gather_object({"rank": rank, "data": "x" * (rank * 50)}, gathered, dst=1)
        if rank == 1:
            assert gathered == [{"rank": r, "data": "x" * (r * 50)} for r in range(world)], gathered
        out = [None]
        dist.scatter_object_list(out, [("obj", r, list(range(r))) for r in range(world)] if rank == 0 else None,
                                 src=0)
        assert out[0] == ("obj", rank, list(range(rank))), out
        if rank == 0:
            dist.send_object_list([1, "two", {"three": 3.0}], dst=1)
        elif rank == 1:
            got = [None, None, None]
            assert dist.recv_object_list(got, src=0) == 0
            assert got == [1, "two", {"three": 3.0}], got
        # a ring through batch_isend_irecv: every rank posts its send before its recv
        nxt, prv = (rank + 1) % world, (rank - 1) % world
        send = ember.full((3,), float(rank))
        recv = ember.zeros(3)
        ops = [dist.P2POp(dist.isend, send, nxt), dist.P2POp(dist.irecv, recv, prv, tag=0)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        expect(recv, [float(prv)] * 3, "batch_isend_irecv ring")
        dist.monitored_barrier(timeout=timedelta(seconds=10))
        dist.monitored_barrier(timeout=timedelta(seconds=10), wait_all_ranks=True)

    def errors():
        raises(ValueError, "all_to_all", lambda: dist.all_to_all_single(ember.zeros(world), ember.zeros(world),
                                                                        input_split_sizes=[1] * (world + 1)))
        raises(ValueError, "add up to", lambda: dist.all_to_all_single(ember.zeros(world), ember.zeros(world),
                                                                       [1] * world, [2] * world))
        raises(ValueError, "evenly", lambda: dist.all_to_all_single(ember.zeros(world + 1), ember.zeros(world + 1)))
        raises(TypeError, "dtype", lambda: dist.all_to_all_single(ember.zeros(world, dtype=ember.int64),
                                                                  ember.zeros(world)))
        raises(ValueError, "world_size", lambda: dist.all_to_all([ember.zeros(1)], [ember.zeros(1)] * world))
        raises(ValueError, "reduce_scatter", lambda: dist.reduce_scatter(ember.zeros(2), [ember.zeros(3)] * world))
        raises(ValueError, "Invalid ``op``", lambda: dist.P2POp(dist.all_reduce, ember.zeros(1), 0))
        raises(TypeError, "P2POp", lambda: dist.batch_isend_irecv([object()]))
        raises(ValueError, "at least 1", lambda: dist.scatter_object_list([], [1] * world))
        # everything above failed before reaching the group: it still works
        x = ember.ones(1)
        dist.all_reduce(x)
        expect(x, [float(world)], "all_reduce after argument errors")

    def subgroups():
        # world 3: blocks of one rank each, and an enumeration {0, 2}, {1}
        assert dist.get_pg_count() == 1
        mine, groups = dist.new_subgroups(group_size=1)
        assert len(groups) == world and dist.get_process_group_ranks(mine) == [rank]
        mine, groups = dist.new_subgroups_by_enumeration([[0, 2], [1]])
        assert dist.get_process_group_ranks(mine) == ([0, 2] if rank != 1 else [1])
        assert dist.get_pg_count() == 1 + world + 2
        x = ember.tensor([float(rank + 1)])
        dist.all_reduce(x, group=mine)
        expect(x, [4.0] if rank != 1 else [2.0], "all_reduce in a subgroup")
        raises(ValueError, "has appeared in both", lambda: dist.new_subgroups_by_enumeration([[0, 1], [1, 2]]))
        raises(ValueError, "must be divisible", lambda: dist.new_subgroups(group_size=2))

    def monitored_missing():
        # the last rank (and with 3 ranks the middle one too) never arrives
        late = {world - 1} if world == 2 else {1, 2}
        if rank in late:
            time.sleep(1.5)
            return
        e = raises(dist.DistBackendError, "failed to pass monitoredBarrier",
                   lambda: dist.monitored_barrier(timeout=timedelta(seconds=1), wait_all_ranks=True))
        want = "Rank 1 failed" if world == 2 else "Ranks 1, 2 failed"
        assert want in str(e), str(e)
        assert isinstance(e, RuntimeError)

    def backend_error():
        # rank 1 leaves: rank 0's collective fails as a DistBackendError (a RuntimeError)
        if rank == 1:
            os._exit(0)
        e = raises(dist.DistBackendError, "all_reduce", lambda: dist.all_reduce(ember.ones(1)))
        assert isinstance(e, dist.DistError) and isinstance(e, RuntimeError)

    globals()[scenario]()
    print("OK", flush=True)
    sys.stdout.flush()
    os._exit(0)
''')


def run_world(tmp_path, scenario, world, timeout=60, env=None):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    environ = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1", **(env or {}))
    init_method = f"file://{tmp_path / 'store'}"
    procs = [subprocess.Popen([sys.executable, str(script), scenario, str(r), str(world), init_method],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environ)
             for r in range(world)]
    return collect(procs, timeout)


@pytest.mark.parametrize("world", [2, 3])
def test_all_to_all_and_reduce_scatter(tmp_path, world):
    require_ok(run_world(tmp_path, "alltoall", world))


@pytest.mark.parametrize("world", [2, 3])
def test_object_collectives_batch_p2p_and_monitored_barrier(tmp_path, world):
    require_ok(run_world(tmp_path, "objects", world))


def test_new_subgroups(tmp_path):
    require_ok(run_world(tmp_path, "subgroups", 3))


def test_bad_arguments_raise_before_the_collective(tmp_path):
    require_ok(run_world(tmp_path, "errors", 2))


@pytest.mark.parametrize("world", [2, 3])
def test_monitored_barrier_names_the_missing_ranks(tmp_path, world):
    outputs = run_world(tmp_path, "monitored_missing", world, timeout=30)
    require_ok(outputs[:1])


def test_dead_peer_raises_dist_backend_error(tmp_path):
    outputs = run_world(tmp_path, "backend_error", 2, timeout=30, env={"PG_TIMEOUT": "3"})
    require_ok(outputs[:1])


# ---- in this process

def test_import_ember_makes_distributed_an_attribute():
    code = "import ember; print(ember.distributed.is_initialized(), ember.distributed.is_available())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_exception_classes():
    for cls in (dist.DistError, dist.DistBackendError, dist.DistStoreError, dist.DistNetworkError):
        assert issubclass(cls, RuntimeError)
    assert issubclass(dist.DistBackendError, dist.DistError)
    assert issubclass(dist.DistStoreError, dist.DistError)


def test_environment_helpers(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    with pytest.raises(RuntimeError, match="LOCAL_RANK"):
        dist.get_node_local_rank()
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert dist.get_node_local_rank(fallback_rank=3) == 2
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert not dist.is_torchelastic_launched()
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "none")
    assert dist.is_torchelastic_launched()
    assert dist.is_mpi_available() is False
    assert dist.is_gloo_available() is True
    assert isinstance(dist.is_nccl_available(), bool)
    assert dist.is_backend_available("gloo") and not dist.is_backend_available("mpi")
    assert dist.get_default_backend_for_device("cuda:0") == "nccl"
    assert dist.get_default_backend_for_device("cpu") == "gloo"


def test_ember_run_sets_torchelastic_run_id(tmp_path):
    script = tmp_path / "w.py"
    script.write_text("import ember.distributed as d; print('launched', d.is_torchelastic_launched(), "
                      "d.get_node_local_rank())\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.pop("TORCHELASTIC_RUN_ID", None)
    out = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "1", str(script)],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert "launched True 0" in out.stdout


def test_single_process_world(tmp_path):
    assert not dist.is_initialized()
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1,
                            timeout=timedelta(seconds=5))
    try:
        assert dist.get_backend() == "gloo"
        x = ember.arange(6.0).reshape(3, 2)
        out = ember.zeros(3, 2)
        dist.all_to_all_single(out, x)
        np.testing.assert_array_equal(out.numpy(), x.numpy())
        outs = [ember.zeros(2, 2)]
        dist.all_to_all(outs, [ember.ones(2, 2)])
        np.testing.assert_array_equal(outs[0].numpy(), np.ones((2, 2)))
        with pytest.raises(ValueError, match="sends itself 8 elements"):
            dist.all_to_all_single(out, ember.zeros(4, 2))
        got = [None]
        dist.gather_object([1, 2], got, dst=0)
        assert got == [[1, 2]]
        got = [None]
        dist.scatter_object_list(got, ["only"], src=0)
        assert got == ["only"]
        dist.monitored_barrier(timeout=timedelta(seconds=2))
        out = ember.zeros(2)
        dist.reduce_scatter(out, [ember.tensor([1.0, 2.0])])
        np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])
    finally:
        dist.destroy_process_group()
