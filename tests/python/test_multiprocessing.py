"""ember.multiprocessing: the re-exported standard module, spawn/start_processes and their
failure reports, compared with torch.multiprocessing where it is importable.

Workers are module-level functions (spawn pickles them by name). Exception tests use the
fork start method (no interpreter start-up); the others spawn. Every test bounds its wait
and kills leftover children in a finally.
"""
import multiprocessing as std_mp
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ember
import ember.multiprocessing as mp



def _torch_mp():
    """torch.multiprocessing or None; imported lazily so spawned workers, which import this
    module to find their function, do not pay for importing torch."""
    try:
        import torch.multiprocessing as torch_mp
    except ImportError:
        return None
    return torch_mp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOIN_TIMEOUT = 30  # seconds; a hung worker fails the test instead of the suite


# ---- workers (top level: spawn pickles them by reference) ----

def _put_scaled(i, t, queue):
    queue.put((i, t * (i + 1)))


def _raise_on_rank1(i):
    if i == 1:
        raise ValueError(f"boom from rank {i}")
    time.sleep(60)  # must be terminated by the parent


def _exit_code_3(i):
    if i == 0:
        os._exit(3)
    time.sleep(60)


def _killed_by_sigkill(i):
    os.kill(os.getpid(), signal.SIGKILL)


def _sleep_briefly(i, seconds):
    time.sleep(seconds)


def _kill_all(ctx):
    for p in ctx.processes:
        if p.is_alive():
            p.kill()
        p.join(5)


def _join_bounded(ctx):
    deadline = time.monotonic() + JOIN_TIMEOUT
    try:
        while not ctx.join(timeout=max(0.0, deadline - time.monotonic())):
            assert time.monotonic() < deadline, "workers did not finish in time"
    finally:
        _kill_all(ctx)


# ---- the module's surface ----

def test_reexports_standard_multiprocessing():
    for name in std_mp.__all__:
        assert hasattr(mp, name), name
    assert mp.get_context("spawn").get_start_method() == "spawn"
    assert mp.Queue is std_mp.Queue and mp.Process is std_mp.Process
    assert mp.cpu_count() == os.cpu_count()


def test_public_names_match_torch():
    torch_mp = _torch_mp()
    if torch_mp is None:
        pytest.skip("torch is not importable")
    ours = {n for n in dir(mp) if not n.startswith("_")}
    theirs = {n for n in dir(torch_mp) if not n.startswith("_")}
    # torch internals: its ForkingPickler reducers, constants and imported modules.
    internal = {"reducer", "reductions", "torch", "sys", "ENV_VAR_PARALLEL_START", "multiprocessing"}
    assert theirs - ours - internal == set()


def test_exception_classes_match_torch():
    assert issubclass(mp.ProcessRaisedException, mp.ProcessException)
    assert issubclass(mp.ProcessExitedException, mp.ProcessException)
    assert mp.ProcessSpawnContext is mp.ProcessContext
    e = mp.ProcessExitedException("process 1 terminated with exit code 3", 1, 123, exit_code=3)
    import pickle
    back = pickle.loads(pickle.dumps(e))
    assert (back.msg, back.error_index, back.error_pid, back.exit_code, back.signal_name) == (e.msg, 1, 123, 3, None)
    torch_mp = _torch_mp()
    if torch_mp is not None:
        t = torch_mp.ProcessExitedException("m", 1, 2, exit_code=3, signal_name="SIGKILL")
        o = mp.ProcessExitedException("m", 1, 2, exit_code=3, signal_name="SIGKILL")
        assert [getattr(o, a) for a in ("msg", "error_index", "error_pid", "exit_code", "signal_name")] == \
               [getattr(t, a) for a in ("msg", "error_index", "error_pid", "exit_code", "signal_name")]


def test_spawn_context_is_the_deprecated_name():
    with pytest.warns(UserWarning, match="renamed to ProcessContext"):
        ctx = mp.SpawnContext([], [])
    assert isinstance(ctx, mp.ProcessContext) and ctx.join() is True  # nothing to wait for


def test_sharing_strategies():
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("no such strategy")
    torch_mp = _torch_mp()
    if torch_mp is not None:
        assert mp.get_all_sharing_strategies() == torch_mp.get_all_sharing_strategies()
        assert mp.get_sharing_strategy() == torch_mp.get_sharing_strategy()


def test_share_memory_moves_data_in_place():
    t = ember.arange(4.0)
    assert t.is_shared() is False
    assert t.share_memory_() is t
    assert t.is_shared() is True and t.tolist() == [0.0, 1.0, 2.0, 3.0]  # as torch
    model = ember.nn.Linear(2, 2)
    assert model.share_memory() is model
    assert all(p.is_shared() for p in model.parameters())


# ---- spawn / start_processes ----

def test_spawn_calls_fn_with_rank_and_pickled_tensor_args():
    queue = mp.get_context("spawn").Queue()
    t = ember.tensor([1.0, 2.0, 3.0])
    ctx = mp.spawn(_put_scaled, args=(t, queue), nprocs=2, join=False)
    try:
        results = dict(queue.get(timeout=JOIN_TIMEOUT) for _ in range(2))
        _join_bounded(ctx)
    finally:
        _kill_all(ctx)
    assert sorted(results) == [0, 1]
    for i, got in results.items():
        assert isinstance(got, ember.Tensor)
        np.testing.assert_array_equal(got.numpy(), np.array([1.0, 2.0, 3.0]) * (i + 1))


def test_join_timeout_returns_false_while_running_then_true():
    ctx = mp.start_processes(_sleep_briefly, args=(1.0,), nprocs=2, join=False, start_method="fork")
    try:
        assert ctx.join(timeout=0.01) is False
        assert len(ctx.pids()) == 2
        _join_bounded(ctx)
        assert ctx.join() is True
        assert [p.exitcode for p in ctx.processes] == [0, 0]
    finally:
        _kill_all(ctx)


def test_raised_exception_carries_child_traceback_and_stops_the_others():
    start = time.monotonic()
    ctx = mp.start_processes(_raise_on_rank1, nprocs=2, join=False, start_method="fork")
    try:
        with pytest.raises(mp.ProcessRaisedException) as info:
            _join_bounded(ctx)
        e = info.value
        assert e.error_index == 1 and e.error_pid == ctx.processes[1].pid
        assert "-- Process 1 terminated with the following error:" in str(e)
        assert "Traceback (most recent call last)" in str(e)
        assert "ValueError: boom from rank 1" in str(e)
        assert not ctx.processes[0].is_alive()  # the sleeper was terminated, not waited for
        assert ctx.processes[0].exitcode == -signal.SIGTERM
        assert time.monotonic() - start < 20
    finally:
        _kill_all(ctx)


def test_exit_code_is_reported():
    ctx = mp.start_processes(_exit_code_3, nprocs=2, join=False, start_method="fork")
    try:
        with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as info:
            _join_bounded(ctx)
        assert info.value.exit_code == 3 and info.value.signal_name is None and info.value.error_index == 0
        assert not ctx.processes[1].is_alive()
    finally:
        _kill_all(ctx)


def test_signal_is_reported():
    ctx = mp.start_processes(_killed_by_sigkill, nprocs=1, join=False, start_method="fork")
    try:
        with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with signal SIGKILL") as info:
            _join_bounded(ctx)
        assert info.value.exit_code == -signal.SIGKILL and info.value.signal_name == "SIGKILL"
    finally:
        _kill_all(ctx)


def test_spawn_with_another_start_method_warns_and_spawns():
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        ctx = mp.spawn(_sleep_briefly, args=(0.0,), nprocs=1, join=False, start_method="fork")
    try:
        _join_bounded(ctx)
    finally:
        _kill_all(ctx)


def test_join_true_returns_none_after_success():
    assert mp.start_processes(_sleep_briefly, args=(0.0,), nprocs=2, start_method="fork") is None


# ---- the DDP tutorial, unchanged but for `import ember as torch` ----

DDP_TUTORIAL = textwrap.dedent(r'''
    import os
    import ember as torch
    import ember.distributed as dist
    import ember.multiprocessing as mp
    import ember.nn as nn
    import ember.optim as optim
    from ember.nn.parallel import DistributedDataParallel as DDP


    def setup(rank, world_size):
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = os.environ["TEST_PORT"]
        dist.init_process_group("gloo", rank=rank, world_size=world_size)


    def cleanup():
        dist.destroy_process_group()


    class ToyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.net1 = nn.Linear(10, 10)
            self.relu = nn.ReLU()
            self.net2 = nn.Linear(10, 5)

        def forward(self, x):
            return self.net2(self.relu(self.net1(x)))


    def demo_basic(rank, world_size):
        setup(rank, world_size)
        torch.manual_seed(rank)  # different initial weights: DDP must broadcast rank 0's
        model = ToyModel()
        ddp_model = DDP(model)
        loss_fn = nn.MSELoss()
        optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
        optimizer.zero_grad()
        outputs = ddp_model(torch.randn(20, 10))
        labels = torch.randn(20, 5)
        loss_fn(outputs, labels).backward()
        optimizer.step()
        # Every rank must hold the same parameters after the synchronized step.
        for p in ddp_model.parameters():
            total = p.detach().clone()
            dist.all_reduce(total)
            assert torch.allclose(total, p.detach() * world_size), "ranks diverged"
        print(f"rank {rank} OK", flush=True)
        cleanup()


    def run_demo(demo_fn, world_size):
        mp.spawn(demo_fn, args=(world_size,), nprocs=world_size, join=True)


    if __name__ == "__main__":
        run_demo(demo_basic, 2)
        print("all done", flush=True)
''')


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_script(tmp_path, source, timeout=60):
    script = tmp_path / "script.py"
    script.write_text(source)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), TEST_PORT=str(_free_port()),
               OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        try:  # the script and every worker it spawned share its session's process group
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    return proc.returncode, out


def test_ddp_tutorial_with_spawn(tmp_path):
    if not ember.distributed.is_gloo_available():
        pytest.skip("ember was built without gloo")
    code, out = _run_script(tmp_path, DDP_TUTORIAL)
    assert code == 0, out
    assert "rank 0 OK" in out and "rank 1 OK" in out and "all done" in out, out


def test_spawn_error_surfaces_in_the_parent_script(tmp_path):
    source = textwrap.dedent('''
        import ember.multiprocessing as mp

        def main(rank):
            if rank == 1:
                raise KeyError("missing key on rank 1")

        if __name__ == "__main__":
            try:
                mp.spawn(main, nprocs=2)
            except mp.ProcessRaisedException as e:
                print("caught", e.error_index, "KeyError: 'missing key on rank 1'" in str(e), flush=True)
    ''')
    code, out = _run_script(tmp_path, source)
    assert code == 0, out
    assert "caught 1 True" in out, out
