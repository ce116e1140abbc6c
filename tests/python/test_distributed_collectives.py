"""ember.distributed collectives over gloo, with 2 and 4 real processes.

Each test starts fresh interpreters running WORKER (below) on loopback; they
meet through a FileStore (init_method="file://...") so the tests do not
depend on TCP rendezvous. A worker checks every result itself and exits
non-zero with its traceback on a mismatch; the test fails naming that rank.
"""
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

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
    timeout = timedelta(seconds=20)
    if init_method == "env://":  # everything from MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE; default backend
        dist.init_process_group(timeout=timeout)
        assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (rank, world, "gloo")
    else:
        dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world, timeout=timeout)
    R = dist.ReduceOp

    def check(t, expected, what):
        got = t.double().numpy() if isinstance(t, ember.Tensor) else t
        if not np.allclose(got, expected, rtol=1e-2, atol=1e-2):
            raise AssertionError(f"rank {rank}: {what}: got {got}, expected {np.asarray(expected)}")

    def t(values, dtype=ember.float32):
        return ember.tensor(values, dtype=dtype)

    def collectives():
        ranks = np.arange(world)
        for dtype in (ember.float32, ember.float64, ember.int32, ember.int64, ember.uint8, ember.float16,
                      ember.bfloat16):
            for op, expected in ((R.SUM, ranks.sum() + world), (R.PRODUCT, np.prod(ranks + 1)),
                                 (R.MIN, 1), (R.MAX, world)):
                x = t([rank + 1, 1], dtype)
                dist.all_reduce(x, op=op)
                check(x, [expected, world if op == R.SUM else 1], f"all_reduce {op} {dtype}")
        for op, expected in ((R.MAX, [True, True]), (R.MIN, [False, True]), (R.SUM, [True, True])):
            x = t([rank == 0, True], ember.bool)
            dist.all_reduce(x, op=op)
            assert x.tolist() == expected, (op, x.tolist())
        x = t([float(rank), 1.0])
        dist.all_reduce(x, op=R.AVG)
        check(x, [ranks.mean(), 1.0], "all_reduce AVG")
        # non-contiguous: a transposed view is reduced through a copy and written back
        base = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        dist.all_reduce(base.t())
        check(base, np.array([[1, 2, 3], [4, 5, 6]]) * world, "all_reduce on a transposed view")

        src = world - 1
        x = t([rank, rank * 10.0])
        dist.broadcast(x, src=src)
        check(x, [src, src * 10.0], "broadcast")

        x = t([rank + 1.0])
        dist.reduce(x, dst=1, op=R.SUM)
        check(x, [ranks.sum() + world] if rank == 1 else [rank + 1.0], "reduce")

        outs = [ember.zeros(2, dtype=ember.int64) for _ in range(world)]
        dist.all_gather(outs, t([rank, -rank], ember.int64))
        for r, o in enumerate(outs):
            check(o, [r, -r], f"all_gather[{r}]")

        out = ember.zeros(world, 2)
        dist.all_gather_into_tensor(out, t([rank, rank + 0.5]))
        check(out, [[r, r + 0.5] for r in range(world)], "all_gather_into_tensor")

        inp = t([rank * 100.0 + i for i in range(2 * world)])
        out = ember.zeros(2)
        dist.reduce_scatter_tensor(out, inp, op=R.SUM)
        check(out, [100.0 * ranks.sum() + world * (2 * rank + i) for i in range(2)], "reduce_scatter_tensor")

        dst = world - 1
        gl = [ember.zeros(1) for _ in range(world)] if rank == dst else None
        dist.gather(t([rank * 3.0]), gather_list=gl, dst=dst)
        if rank == dst:
            for r, g in enumerate(gl):
                check(g, [r * 3.0], f"gather[{r}]")

        out = ember.zeros(3)
        sl = [t([r, r, r]) for r in range(world)] if rank == 0 else None
        dist.scatter(out, scatter_list=sl, src=0)
        check(out, [rank] * 3, "scatter")

        dist.barrier()

        # ring of send/recv: to the right, from the left
        right, left = (rank + 1) % world, (rank - 1) % world
        got = ember.zeros(2)
        s = dist.isend(t([rank, 7.0]), dst=right, tag=3)
        sender = dist.recv(got, src=left, tag=3)
        s.wait()
        check(got, [left, 7.0], "send/recv")
        assert sender == left, sender

        objs = [None] * world
        dist.all_gather_object(objs, {"rank": rank, "pad": "x" * rank})
        assert objs == [{"rank": r, "pad": "x" * r} for r in range(world)], objs
        objs = [("from", rank), rank * 1.5] if rank == 1 else [None, None]
        dist.broadcast_object_list(objs, src=1)
        assert objs == [("from", 1), 1.5], objs

        # complex tensors reduce as pairs of reals: SUM and AVG, not the orderings
        z = ember.tensor([complex(rank, 1), complex(1, -rank)], dtype=ember.complex128)
        dist.all_reduce(z)
        s = world * (world - 1) / 2
        assert z.tolist() == [complex(s, world), complex(world, -s)], z.tolist()
        z = ember.tensor([complex(rank, 2.0)], dtype=ember.complex64)
        dist.all_reduce(z, op=R.AVG)
        assert abs(z.item() - complex((world - 1) / 2, 2.0)) < 1e-6, z.item()
        try:
            dist.all_reduce(ember.zeros(1, dtype=ember.complex64), op=R.MAX)
            raise AssertionError("MAX on a complex tensor did not raise")
        except RuntimeError as e:
            assert "not supported for complex tensors" in str(e), e
        out = ember.zeros(world, dtype=ember.complex64)
        dist.all_gather_into_tensor(out, ember.tensor([complex(rank, -rank)], dtype=ember.complex64))
        assert out.tolist() == [complex(r, -r) for r in range(world)], out.tolist()
        part = ember.zeros(1, dtype=ember.complex128)
        dist.reduce_scatter_tensor(part, ember.tensor([complex(r, 1) for r in range(world)], dtype=ember.complex128))
        assert part.tolist() == [complex(world * rank, world)], part.tolist()

    def async_and_groups():
        works = [dist.all_reduce(t([i + rank]), async_op=True) for i in range(4)]
        for i, w in enumerate(works):
            assert w.wait() is True
            assert w.is_completed()
        assert dist.all_reduce(t([1.0])) is None

        evens = dist.new_group([r for r in range(world) if r % 2 == 0])
        odds = dist.new_group([r for r in range(world) if r % 2 == 1])
        mine, other = (evens, odds) if rank % 2 == 0 else (odds, evens)
        assert other is dist.GroupMember.NON_GROUP_MEMBER, other
        assert dist.get_rank(other) == -1
        assert dist.all_reduce(t([1.0]), group=other) is None
        members = [r for r in range(world) if r % 2 == rank % 2]
        assert dist.get_world_size(mine) == len(members)
        assert dist.get_rank(mine) == members.index(rank)
        assert dist.get_process_group_ranks(mine) == members
        x = t([float(rank)])
        dist.all_reduce(x, group=mine)
        check(x, [sum(members)], "all_reduce in a new group")
        # src is a global rank, as in PyTorch
        x = t([float(rank)])
        dist.broadcast(x, src=members[-1], group=mine)
        check(x, [members[-1]], "broadcast in a new group")
        try:
            dist.broadcast(x, src=other_rank(members), group=mine)
            raise AssertionError("broadcast from a non-member did not raise")
        except ValueError as e:
            assert "is not part of the group" in str(e), e
        whole = dist.new_group()
        x = t([1.0])
        dist.all_reduce(x, group=whole)
        check(x, [world], "all_reduce in new_group() of every rank")

    def other_rank(members):
        return next(r for r in range(world) if r not in members)

    def errors():
        def raises(exc, text, fn):
            try:
                fn()
            except exc as e:
                assert text in str(e), f"{text!r} not in {str(e)!r}"
                return
            raise AssertionError(f"no {exc.__name__} with {text!r}")
        raises(ValueError, "all_gather: expected", lambda: dist.all_gather([ember.zeros(2)], ember.zeros(2)))
        raises(ValueError, "shape [3]", lambda: dist.all_gather([ember.zeros(2), ember.zeros(3)], ember.zeros(2)))
        raises(ValueError, "all_gather_into_tensor: output of shape [3]",
               lambda: dist.all_gather_into_tensor(ember.zeros(3), ember.zeros(2)))
        raises(ValueError, "reduce_scatter_tensor: input of shape [3]",
               lambda: dist.reduce_scatter_tensor(ember.zeros(2), ember.zeros(3)))
        raises(TypeError, "all_reduce: ReduceOp.AVG needs a floating-point tensor",
               lambda: dist.all_reduce(ember.zeros(2, dtype=ember.int64), op=R.AVG))
        raises(TypeError, "all_reduce: tensor must be an ember.Tensor", lambda: dist.all_reduce([1.0]))
        raises(TypeError, "all_gather: output tensors has dtype float64",
               lambda: dist.all_gather([ember.zeros(1, dtype=ember.float64)] * world, ember.zeros(1)))
        raises(ValueError, "broadcast: global rank 9 is not part of the group", lambda: dist.broadcast(t([1.0]), src=9))
        raises(ValueError, "send: destination rank", lambda: dist.send(t([1.0]), dst=rank))
        raises(RuntimeError, "initialize the default process group twice",
               lambda: dist.init_process_group("gloo", init_method=init_method, rank=rank, world_size=world))
        # the group still works after argument errors (they never reach the peers)
        x = t([1.0])
        dist.all_reduce(x)
        check(x, [world], "all_reduce after argument errors")

    def early_exit():
        # a short timeout on a group made once every rank is up (a loaded
        # machine may start the interpreters seconds apart)
        g = dist.new_group(timeout=timedelta(seconds=2))
        x = t([1.0])
        dist.all_reduce(x, group=g)
        if rank == 0:
            time.sleep(0.5)  # the others finish #0 (an abrupt close could lose its last bytes) and enter #1
            os._exit(0)  # leaves without a word: the others must fail, not hang
        start = time.time()
        try:
            dist.all_reduce(x, group=g)
            dist.all_reduce(x, group=g)
            raise AssertionError("all_reduce with a missing peer did not raise")
        except RuntimeError as e:
            print(f"ERROR: {e}", flush=True)
            assert "all_reduce #" in str(e) and f"on rank {rank} of {world}" in str(e), e
        assert time.time() - start < 10, time.time() - start

    def silent_peer():
        g = dist.new_group(timeout=timedelta(seconds=2))
        x = t([1.0])
        dist.all_reduce(x, group=g)
        if rank == 0:
            time.sleep(3)  # alive but never calls the collective
            os._exit(0)
        try:
            dist.all_reduce(x, group=g)
            raise AssertionError("all_reduce with a silent peer did not raise")
        except RuntimeError as e:
            print(f"ERROR: {e}", flush=True)
            assert f"all_reduce #1 on rank {rank} of {world} timed out after 2000 ms" in str(e), e

    def mismatch():  # run with EMBER_DISTRIBUTED_DEBUG=DETAIL
        x = t([1.0, 2.0])
        dist.all_reduce(x)
        try:
            if rank == 0:
                dist.all_reduce(x, op=R.MAX)
            else:
                dist.broadcast(ember.zeros(3, dtype=ember.int64), src=0)
            raise AssertionError("mismatched collectives did not raise")
        except ValueError as e:
            print(f"ERROR: {e}", flush=True)
            for text in (f"#1 on rank {rank} of 2: mismatched collectives", "all_reduce(float32, numel=2, op=MAX)",
                         "broadcast(int64, numel=3, root=0)"):
                assert text in str(e), (text, str(e))

    def interrupt():
        x = t([1.0])
        dist.all_reduce(x)
        if rank == 1:
            time.sleep(30)  # killed by the test before
        print("waiting", flush=True)
        try:
            dist.all_reduce(x)  # stuck: rank 1 never joins
            raise AssertionError("all_reduce returned without rank 1")
        except KeyboardInterrupt:
            print("interrupted", flush=True)

    {"interrupt": interrupt, "mismatch": mismatch, "collectives": collectives, "async_and_groups": async_and_groups, "errors": errors,
     "early_exit": early_exit, "silent_peer": silent_peer}[scenario]()
    dist.destroy_process_group()
    print("OK", flush=True)
''')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_world(tmp_path, scenario, world, timeout=60, env=None, init="file", on_start=None):
    """Runs WORKER's `scenario` on `world` processes; returns each rank's (exit code, output).

    init: "file" (a FileStore in tmp_path), "env" (env:// with MASTER_ADDR/PORT, RANK, WORLD_SIZE) or
    "tcp" (tcp://127.0.0.1:port)."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    environ = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1", **(env or {}))
    if init == "file":
        init_method = f"file://{tmp_path / 'store'}"
    elif init == "tcp":
        init_method = f"tcp://127.0.0.1:{free_port()}"
    else:
        init_method = "env://"
        environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(world))
    procs = [subprocess.Popen([sys.executable, str(script), scenario, str(r), str(world), init_method],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env=dict(environ, RANK=str(r)),
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
             for r in range(world)]
    if on_start is not None:
        try:
            on_start(procs)
        except BaseException:
            for p in procs:
                p.kill()
            raise
    return collect(procs, timeout)


@pytest.mark.parametrize("world", [2, 4])
def test_every_collective(tmp_path, world):
    require_ok(run_world(tmp_path, "collectives", world))


@pytest.mark.parametrize("world", [2, 4])
def test_async_op_and_new_group(tmp_path, world):
    require_ok(run_world(tmp_path, "async_and_groups", world))


@pytest.mark.parametrize("init", ["env", "tcp"])
def test_rendezvous_through_tcp_store(tmp_path, init):
    require_ok(run_world(tmp_path, "async_and_groups", 2, init=init))


def test_bad_arguments_raise_naming_the_collective(tmp_path):
    require_ok(run_world(tmp_path, "errors", 2))


def test_rank_exiting_early_makes_the_others_fail(tmp_path):
    outputs = run_world(tmp_path, "early_exit", 3)
    require_ok(outputs[1:])


def test_silent_peer_makes_the_others_time_out(tmp_path):
    outputs = run_world(tmp_path, "silent_peer", 2)
    require_ok(outputs[1:])


def test_mismatched_collectives_are_reported_with_debug_detail(tmp_path):
    require_ok(run_world(tmp_path, "mismatch", 2, env={"EMBER_DISTRIBUTED_DEBUG": "DETAIL"}))


def test_ctrl_c_interrupts_a_stuck_collective(tmp_path):
    def interrupt_rank0(procs):
        assert procs[0].stdout.readline().strip() == "waiting"
        time.sleep(0.3)
        procs[0].send_signal(signal.SIGINT)
        start = time.time()
        out, _ = procs[0].communicate(timeout=10)
        procs[0].stdout_after = out
        assert time.time() - start < 5, "the interrupted rank took too long to exit"
        procs[1].kill()

    procs = []
    outputs = run_world(tmp_path, "interrupt", 2, on_start=lambda ps: (procs.extend(ps), interrupt_rank0(ps)))
    assert procs[0].returncode == 0, outputs[0]
    assert "interrupted" in procs[0].stdout_after and "OK" in procs[0].stdout_after, procs[0].stdout_after


def test_single_process_group_and_state(tmp_path):
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="rank 3 is not in"):
        dist.init_process_group("gloo", init_method=f"file://{tmp_path / 's0'}", rank=3, world_size=2)
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("mpi", init_method=f"file://{tmp_path / 's0'}", rank=0, world_size=1)
    with pytest.raises(ValueError, match="unsupported init_method"):
        dist.init_process_group("gloo", init_method="udp://x:1", rank=0, world_size=1)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 's1'}", rank=0, world_size=1)
    try:
        assert dist.is_initialized()
        assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
        x = ember.tensor([3.0, 4.0])
        dist.all_reduce(x, op=dist.ReduceOp.AVG)
        assert x.tolist() == [3.0, 4.0]
        w = dist.barrier(async_op=True)
        assert w.wait() and w.is_completed()
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    assert not (tmp_path / "s1").exists()  # the last user of a FileStore removes it


def test_file_store_set_get_add_wait(tmp_path):
    a = dist.FileStore(str(tmp_path / "kv"), 2)
    b = dist.FileStore(str(tmp_path / "kv"), 2)
    a.set("k", "v")
    assert b.get("k") == b"v"
    assert a.add("n", 2) == 2 and b.add("n", 3) == 5
    assert b.check(["k", "n"]) and not b.check(["missing"])
    from datetime import timedelta
    with pytest.raises(RuntimeError, match="timed out after 50 ms waiting for 'missing'"):
        a.wait(["missing"], timedelta(milliseconds=50))
    assert a.delete_key("k") and not b.check(["k"])


BATCH_PROBE = textwrap.dedent(r'''
    import os, sys
    import ember.distributed as dist
    dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=0, world_size=1)
    batch = [t for t in os.listdir("/proc/self/task") if os.sched_getscheduler(int(t)) == os.SCHED_BATCH]
    print(len(batch), len(os.listdir("/proc/self/task")))
    dist.destroy_process_group()
''')


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SCHED_BATCH and /proc/self/task are Linux's")
@pytest.mark.parametrize("setting", [None, "0"])
def test_gloo_event_loop_thread_is_batch_scheduled(tmp_path, setting):
    # gloo's loop thread must not preempt a thread that holds a pair's lock
    # (distributed/gloo/loop_thread.h); EMBER_GLOO_LOOP_BATCH=0 leaves it alone.
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    env.pop("EMBER_GLOO_LOOP_BATCH", None)
    if setting is not None:
        env["EMBER_GLOO_LOOP_BATCH"] = setting
    out = subprocess.run([sys.executable, "-c", BATCH_PROBE, str(tmp_path / "store")], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    batch, threads = map(int, out.stdout.split())
    if setting == "0":
        assert batch == 0
    else:
        assert 1 <= batch < threads  # the device's thread(s), not the interpreter's main thread
