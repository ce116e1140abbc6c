"""Uneven inputs: DistributedDataParallel.join() and the generic
ember.distributed.algorithms.Join, over gloo with 2 and 3 real processes.

Rank r trains on COUNTS[r] batches. Every worker also computes, in one
process, the reference run: at iteration k the ranks with more than k batches
are active, and the step uses the sum of their gradients divided by the
initial world size (or by the number of active ranks). The workers run with
EMBER_DISTRIBUTED_DEBUG=DETAIL, so a shadow collective of the wrong kind,
dtype or size fails on every rank instead of passing unnoticed.
"""
import inspect
import os
import subprocess
import sys
import textwrap

import pytest

import ember
import ember.distributed as dist
from ember.distributed.algorithms import Join, Joinable, JoinHook
from ranks import collect, require_ok

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(),
                                reason="ember was built without gloo (install libgloo-dev and rebuild)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKER = textwrap.dedent(r'''
    import sys
    import time
    from datetime import timedelta
    import numpy as np
    import ember
    import ember.distributed as dist
    from ember import nn
    from ember.distributed.algorithms import Join, Joinable, JoinHook
    from ember.nn.parallel import DistributedDataParallel as DDP

    scenario, rank, world, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    counts = [int(c) for c in sys.argv[5].split(",")]
    dist.init_process_group("gloo", init_method="file://" + path, rank=rank, world_size=world,
                            timeout=timedelta(seconds=20))

    class Net(nn.Module):
        def __init__(self, seed, never=False):
            super().__init__()
            ember.manual_seed(seed)
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 3)
            self.extra = nn.Linear(3, 3)
            # a float64 parameter: a second dtype, so a bucket of its own
            self.scale = nn.Parameter(ember.rand(3, dtype=ember.float64) + 0.5)
            if never:
                self.never = nn.Linear(3, 3)
            self.register_buffer("counter", ember.full((2,), float(seed)))

        def forward(self, x, use_extra=True):
            with ember.no_grad():
                self.counter += 1
            h = self.fc2(ember.tanh(self.fc1(x))) * self.scale.float()
            return self.extra(h) if use_extra else h

    def batch(r, b):
        rng = np.random.default_rng(100 * r + b)
        return (ember.tensor(rng.standard_normal((4, 4)), dtype=ember.float32),
                ember.tensor(rng.standard_normal((4, 3)), dtype=ember.float32))

    def loss_fn(out, target):
        return ((out - target) ** 2).mean()

    def check(got, expected, what, tol=1e-5):
        got, expected = got.detach().double().numpy(), expected.detach().double().numpy()
        if not np.allclose(got, expected, rtol=tol, atol=tol):
            raise AssertionError(f"rank {rank}: {what}: got {got}, expected {expected}")

    def reference(divide_by_initial, extra_ranks, never=False, set_to_none=True):
        """One process, rank 0's initial weights, the active ranks' gradients each iteration."""
        model = Net(0, never)
        opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for k in range(max(counts)):
            active = [r for r in range(world) if counts[r] > k]
            opt.zero_grad(set_to_none=set_to_none)
            total = sum(loss_fn(model(*[batch(r, k)[0]], use_extra=r in extra_ranks), batch(r, k)[1])
                        for r in active)
            (total / (world if divide_by_initial else len(active))).backward()
            opt.step()
        return model

    def train_joined(ddp, opt, join, use_extra=True, set_to_none=True, per_iteration=None):
        with join:
            for b in range(counts[rank]):
                x, y = batch(rank, b)
                opt.zero_grad(set_to_none=set_to_none)
                loss_fn(ddp(x, use_extra=use_extra), y).backward()
                opt.step()
                if per_iteration:
                    per_iteration()

    def same_everywhere(t, what):
        """t is equal on every rank (gathered, compared here)."""
        got = [ember.zeros_like(t) for _ in range(world)]
        dist.all_gather(got, t.detach().contiguous())
        for r in range(world):
            check(got[r], t, f"{what} differs between rank {rank} and rank {r}", tol=0)

    def check_model(ddp, ref, what, forwards_per_step=1):
        for (name, p), (_, q) in zip(ddp.module.named_parameters(), ref.named_parameters()):
            check(p, q, f"{what}: {name}")
            same_everywhere(p, f"{what}: {name}")
        # buffers come from the highest active rank each forward, so the
        # counter grows once per iteration of the longest run
        check(ddp.module.counter, ember.full((2,), float(forwards_per_step * max(counts))), f"{what}: buffer")

    def by_initial_world_size():
        ddp = DDP(Net(rank), bucket_cap_mb=1e-5)  # one bucket per parameter: sizes and order must match
        assert len(ddp._reducer._bucket_indices()) == 7, ddp._reducer._bucket_indices()
        opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        train_joined(ddp, opt, ddp.join())
        check_model(ddp, reference(True, range(world)), "divide_by_initial_world_size=True")
        # after the context DDP communicates as before: an even step on every rank
        assert not ddp._join_config.enable
        x, y = batch(rank, 99)
        loss_fn(ddp(x), y).backward()

    def by_active_ranks():
        # `extra` is used on rank 1 only, so elsewhere it is locally unused
        # but globally used while rank 1 is active; `never` is unused everywhere.
        ddp = DDP(Net(rank, never=True), find_unused_parameters=True, gradient_as_bucket_view=True)
        opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        def evaluate():  # a forward without backward: joined ranks must not expect gradient buckets
            with ember.no_grad():
                ddp(batch(rank, 0)[0])
        train_joined(ddp, opt, ddp.join(divide_by_initial_world_size=False), use_extra=rank == 1,
                     set_to_none=False, per_iteration=evaluate)
        ref = reference(False, [1], never=True, set_to_none=False)
        check_model(ddp, ref, "divide_by_initial_world_size=False", forwards_per_step=2)
        assert ddp.module.never.weight.grad is None, "a parameter unused everywhere keeps grad None"

    def no_buffer_broadcast():
        # broadcast_buffers=False: no buffer collectives to shadow; the final
        # sync copies parameters only, so each rank keeps its own counter
        ddp = DDP(Net(rank), broadcast_buffers=False)
        opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        train_joined(ddp, opt, ddp.join())
        ref = reference(True, range(world))
        for (name, p), (_, q) in zip(ddp.module.named_parameters(), ref.named_parameters()):
            check(p, q, f"broadcast_buffers=False: {name}")
        check(ddp.module.counter, ember.full((2,), float(counts[rank])), "broadcast_buffers=False: own counter")

    def throw():
        ddp = DDP(Net(rank))
        opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
        steps = []
        try:
            train_joined(ddp, opt, ddp.join(throw_on_early_termination=True), per_iteration=lambda: steps.append(1))
            raise AssertionError(f"rank {rank}: throw_on_early_termination did not raise")
        except RuntimeError as e:
            if counts[rank] == min(counts):
                assert str(e) == f"Rank {rank} exhausted all inputs.", e
            else:
                assert "Detected at least one rank that exhausted inputs" in str(e), e
        assert len(steps) == min(counts), steps
        # every rank stopped after the same step, and the group is still in step
        for name, p in ddp.module.named_parameters():
            same_everywhere(p, f"after the throw: {name}")

    def no_join():
        # the same uneven run without join: the longer rank's next collective
        # times out (short group timeout) instead of hanging
        g = dist.new_group(timeout=timedelta(seconds=1))
        ddp = DDP(Net(rank), process_group=g)
        opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
        if counts[rank] == min(counts):
            for b in range(counts[rank]):
                x, y = batch(rank, b)
                loss_fn(ddp(x), y).backward()
            time.sleep(2)  # alive but silent
            return
        start = time.time()
        try:
            for b in range(counts[rank]):
                x, y = batch(rank, b)
                opt.zero_grad()
                loss_fn(ddp(x), y).backward()
                opt.step()
            raise AssertionError(f"rank {rank}: an uneven run without join did not fail")
        except RuntimeError as e:
            assert "timed out after 1000 ms" in str(e), e
        assert time.time() - start < 10, time.time() - start

    class Tally(Joinable):
        """A second joinable: counts, on every rank, the batches the active ranks ran."""

        def __init__(self):
            super().__init__()
            self.total = 0
            self.kwargs = None
            self.last_joiner = None

        def step(self):
            assert Join.notify_join_context(self) is None  # only the first joinable counts ranks
            self._add(1.0)

        def _add(self, value):
            t = ember.tensor([value])
            dist.all_reduce(t)
            self.total += int(t.item())

        def join_hook(self, **kwargs):
            self.kwargs = kwargs
            tally = self

            class Hook(JoinHook):
                def main_hook(self):
                    tally._add(0.0)

                def post_hook(self, is_last_joiner):
                    tally.last_joiner = is_last_joiner
            return Hook()

        @property
        def join_device(self):
            return ember.device("cpu")

        @property
        def join_process_group(self):
            return dist.group.WORLD

    def joinables():
        ddp = DDP(Net(rank))
        tally = Tally()
        opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        join = Join([ddp, tally], divide_by_initial_world_size=False)
        assert tally.kwargs == {"divide_by_initial_world_size": False}, tally.kwargs
        train_joined(ddp, opt, join, per_iteration=tally.step)
        assert tally.total == sum(counts), (tally.total, counts)
        assert tally.last_joiner == (counts[rank] == max(counts)), tally.last_joiner
        check_model(ddp, reference(False, range(world)), "Join([ddp, tally])")

    def disabled():
        # enable=False: no shadowing; with even inputs this is plain DDP
        ddp = DDP(Net(rank))
        opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        train_joined(ddp, opt, ddp.join(enable=False))
        assert not ddp._join_config.enable
        check_model(ddp, reference(True, range(world)), "enable=False, even inputs")

    {"by_initial_world_size": by_initial_world_size, "by_active_ranks": by_active_ranks,
     "no_buffer_broadcast": no_buffer_broadcast, "throw": throw, "no_join": no_join, "joinables": joinables,
     "disabled": disabled}[scenario]()
    dist.destroy_process_group()
    print("OK", flush=True)
''')


def run_world(tmp_path, scenario, counts, timeout=60, debug=True):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    store = tmp_path / "store"
    environ = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    if debug:
        environ["EMBER_DISTRIBUTED_DEBUG"] = "DETAIL"
    world = len(counts)
    procs = [subprocess.Popen([sys.executable, str(script), scenario, str(r), str(world), str(store),
                               ",".join(map(str, counts))],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environ)
             for r in range(world)]
    return collect(procs, timeout)


@pytest.mark.parametrize("counts", [[3, 5], [3, 5, 4]])
def test_join_divides_by_initial_world_size(tmp_path, counts):
    require_ok(run_world(tmp_path, "by_initial_world_size", counts))


# [3, 4, 5]: at iteration 3 ranks 1 and 2 are active; only rank 1 uses
# `extra`, and rank 2, where it is locally unused, is the final model's source.
@pytest.mark.parametrize("counts", [[3, 5], [3, 4, 5]])
def test_join_divides_by_active_ranks_with_unused_parameters(tmp_path, counts):
    require_ok(run_world(tmp_path, "by_active_ranks", counts))


def test_join_without_buffer_broadcast(tmp_path):
    require_ok(run_world(tmp_path, "no_buffer_broadcast", [4, 2]))


@pytest.mark.parametrize("counts", [[4, 2], [2, 4, 3]])
def test_throw_on_early_termination_raises_on_every_rank(tmp_path, counts):
    require_ok(run_world(tmp_path, "throw", counts))


def test_uneven_inputs_without_join_time_out(tmp_path):
    require_ok(run_world(tmp_path, "no_join", [2, 3], debug=False))


def test_join_with_a_second_joinable(tmp_path):
    require_ok(run_world(tmp_path, "joinables", [3, 5, 4]))


def test_join_disabled_is_plain_ddp(tmp_path):
    require_ok(run_world(tmp_path, "disabled", [3, 3]))


class _Group:
    def rank(self):
        return 0


class _Fake(Joinable):
    def __init__(self):
        super().__init__()

    def join_hook(self, **kwargs):
        return JoinHook()

    @property
    def join_device(self):
        return ember.device("cpu")

    @property
    def join_process_group(self):
        return _Group()


def test_join_arguments():
    with pytest.raises(ValueError, match="at least one joinable"):
        Join([])
    with pytest.raises(TypeError, match="must be a Joinable"):
        Join([object()])
    with pytest.raises(TypeError):
        Joinable()  # abstract
    a, b = _Fake(), _Fake()
    with pytest.raises(ValueError, match="multiple process groups"):
        Join([a, b])
    b.__class__ = type("_SameGroup", (_Fake,), {"join_process_group": property(lambda self: a_group)})
    a_group = _Group()
    a.__class__ = b.__class__
    join = Join([a, b], enable=False)
    assert Join.notify_join_context(a) is None and Join.notify_join_context(b) is None
    with join:  # disabled: the exit issues no collective
        pass
    assert not a._join_config.enable
    with pytest.raises(AssertionError, match="Joinable"):
        Join.notify_join_context(object())
    hook = JoinHook()
    assert hook.main_hook() is None and hook.post_hook(True) is None


def test_join_signatures_match_torch():
    sig = inspect.signature(ember.nn.parallel.DistributedDataParallel.join)
    assert [(p.name, p.default) for p in sig.parameters.values()] == [
        ("self", inspect.Parameter.empty), ("divide_by_initial_world_size", True), ("enable", True),
        ("throw_on_early_termination", False)]
    assert list(inspect.signature(Join).parameters) == ["joinables", "enable", "throw_on_early_termination",
                                                        "kwargs"]
    assert ember.distributed.algorithms.join.Join is Join
    assert issubclass(ember.nn.parallel.DistributedDataParallel, Joinable)
