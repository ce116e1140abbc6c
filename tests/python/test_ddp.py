"""ember.nn.parallel.DistributedDataParallel over gloo with 2 and 4 real processes.

Each test starts fresh interpreters running WORKER on loopback (they meet
through a FileStore). Every rank also trains a single-process reference on
the whole batch and checks that DDP ends at the same parameters; a worker
exits non-zero with its traceback on a mismatch, and the test names the rank.
"""
import os
import subprocess
import sys
import textwrap

import pytest

import ember
import ember.distributed as dist
from ranks import collect, require_ok

pytestmark = pytest.mark.skipif(not dist.is_gloo_available(),
                                reason="ember was built without gloo (install libgloo-dev and rebuild)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKER = textwrap.dedent(r'''
    import sys
    from datetime import timedelta
    import numpy as np
    import ember
    import ember.distributed as dist
    from ember import nn
    from ember.nn.parallel import DistributedDataParallel as DDP

    scenario, rank, world, path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    dist.init_process_group("gloo", init_method="file://" + path, rank=rank, world_size=world,
                            timeout=timedelta(seconds=20))

    class MLP(nn.Module):
        def __init__(self, seed, unused=False):
            super().__init__()
            ember.manual_seed(seed)
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 3)
            if unused:
                self.extra = nn.Linear(3, 3)
            self.register_buffer("counter", ember.full((2,), float(seed)))

        def forward(self, x):
            return self.fc2(ember.tanh(self.fc1(x)))

    rng = np.random.default_rng(0)
    X = ember.tensor(rng.standard_normal((16, 4)), dtype=ember.float32)
    Y = ember.tensor(rng.standard_normal((16, 3)), dtype=ember.float32)
    per = 16 // world
    x, y = X[rank * per:(rank + 1) * per], Y[rank * per:(rank + 1) * per]

    def loss_fn(out, target):
        return ((out - target) ** 2).mean()

    def check(got, expected, what, tol=1e-5):
        got, expected = got.detach().double().numpy(), expected.detach().double().numpy()
        if not np.allclose(got, expected, rtol=tol, atol=tol):
            raise AssertionError(f"rank {rank}: {what}: got {got}, expected {expected}")

    def reference(steps, unused=False):
        """One process, whole batch, rank 0's initial weights."""
        model = MLP(0, unused)
        opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(steps):
            opt.zero_grad()
            loss_fn(model(X), Y).backward()
            opt.step()
        return model

    def train(**ddp_args):
        # Every rank starts from different weights: DDP must adopt rank 0's.
        ddp = DDP(MLP(rank, ddp_args.pop("unused", False)), **ddp_args)
        check(ddp.module.counter, ember.zeros(2), "buffer broadcast from rank 0")
        opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            loss_fn(ddp(x), y).backward()
            opt.step()
        return ddp

    def same_params(ddp, ref, what):
        for (name, p), (_, q) in zip(ddp.module.named_parameters(), ref.named_parameters()):
            check(p, q, f"{what}: {name}")

    def training():
        ref = reference(3)
        same_params(train(), ref, "default buckets")
        # a tiny cap: one bucket per parameter, several all_reduces per backward
        ddp = train(bucket_cap_mb=1e-5)
        assert len(ddp._reducer._bucket_indices()) == 4, ddp._reducer._bucket_indices()
        same_params(ddp, ref, "small buckets")
        ddp = train(gradient_as_bucket_view=True)
        same_params(ddp, ref, "gradient_as_bucket_view")

        # a module's own buffers come before its children's entries, as in PyTorch
        assert list(ddp.state_dict()) == ["module.counter", "module.fc1.weight", "module.fc1.bias",
                                          "module.fc2.weight", "module.fc2.bias"], list(ddp.state_dict())
        # buffers are re-broadcast at each forward
        with ember.no_grad():
            ddp.module.counter.fill_(float(rank + 5))
        ddp(x)
        check(ddp.module.counter, ember.full((2,), 5.0), "buffer broadcast at forward")
        ddp = DDP(MLP(rank), broadcast_buffers=False)
        with ember.no_grad():
            ddp.module.counter.fill_(float(rank + 5))
        ddp(x)
        check(ddp.module.counter, ember.full((2,), float(rank + 5)), "broadcast_buffers=False")

    def no_sync():
        # Two micro-batches per rank, the first under no_sync: the synced
        # gradient is the sum of both, averaged over ranks.
        ref = MLP(0)
        halves = [(x[:per // 2], y[:per // 2]), (x[per // 2:], y[per // 2:])]
        for r in range(world):
            xr, yr = X[r * per:(r + 1) * per], Y[r * per:(r + 1) * per]
            for part in (slice(0, per // 2), slice(per // 2, per)):
                (loss_fn(ref(xr[part]), yr[part]) / world).backward()
        ddp = DDP(MLP(rank))
        local = MLP(0)
        with ddp.no_sync():
            loss_fn(ddp(halves[0][0]), halves[0][1]).backward()
        loss_fn(local(halves[0][0]), halves[0][1]).backward()
        check(ddp.module.fc1.weight.grad, local.fc1.weight.grad, "no_sync keeps the local gradient")
        loss_fn(ddp(halves[1][0]), halves[1][1]).backward()
        for (name, p), (_, q) in zip(ddp.module.named_parameters(), ref.named_parameters()):
            check(p.grad, q.grad, f"no_sync then sync: {name}.grad")

    def unused():
        ddp = DDP(MLP(rank, unused=True))
        try:
            loss_fn(ddp(x), y).backward()
            raise AssertionError("backward with an unused parameter did not raise")
        except RuntimeError as e:
            assert "extra.weight" in str(e) and "extra.bias" in str(e), e
            assert "find_unused_parameters=True" in str(e), e
            assert "fc1.weight" not in str(e), e
        ddp = train(unused=True, find_unused_parameters=True)
        same_params(ddp, reference(3, unused=True), "find_unused_parameters")
        assert ddp.module.extra.weight.grad is None, "a parameter unused everywhere keeps grad None"

    def mismatch():
        model = MLP(0)
        if rank == world - 1:
            model.fc2 = nn.Linear(8, 5)
        try:
            DDP(model)
            raise AssertionError("DDP of different models did not raise")
        except RuntimeError as e:
            assert "parameters differ across ranks" in str(e), e
            if rank == world - 1:
                assert "fc2.weight has shape [5, 8]" in str(e), e

    {"training": training, "no_sync": no_sync, "unused": unused, "mismatch": mismatch}[scenario]()
    dist.destroy_process_group()
    print("OK", flush=True)
''')


def run_world(tmp_path, scenario, world, timeout=60):
    """Runs WORKER's `scenario` on `world` processes; returns (exit code, output) per rank."""
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    store = tmp_path / "store"
    environ = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, str(script), scenario, str(r), str(world), str(store)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environ)
             for r in range(world)]
    return collect(procs, timeout)


@pytest.mark.parametrize("world", [2, 4])
def test_ddp_matches_single_process_training(tmp_path, world):
    require_ok(run_world(tmp_path, "training", world))


def test_no_sync_accumulates_then_reduces(tmp_path):
    require_ok(run_world(tmp_path, "no_sync", 2))


def test_unused_parameters(tmp_path):
    require_ok(run_world(tmp_path, "unused", 2))


def test_different_models_raise_on_every_rank(tmp_path):
    require_ok(run_world(tmp_path, "mismatch", 2))


def test_ddp_needs_an_initialized_group_and_trainable_parameters():
    if dist.is_initialized():
        pytest.skip("a default group is already initialized in this process")
    with pytest.raises(RuntimeError, match="not initialized|init_process_group"):
        ember.nn.parallel.DistributedDataParallel(ember.nn.Linear(2, 2))
    frozen = ember.nn.Linear(2, 2)
    frozen.requires_grad_(False)
    with pytest.raises(RuntimeError, match="doesn't have any parameter that requires a gradient"):
        ember.nn.parallel.DistributedDataParallel(frozen)
