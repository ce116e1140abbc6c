"""nn.SyncBatchNorm: one process behaves as BatchNorm; over 2 and 3 gloo
processes each holding part of a batch, outputs, input gradients, the summed
weight/bias gradients and the running statistics equal BatchNorm's on the
whole batch in one process."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember import nn
from ranks import collect, require_ok

CASES = []

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WORKER = textwrap.dedent(r'''
    import sys
    from datetime import timedelta
    import numpy as np
    import ember
    import ember.distributed as dist
    from ember import nn

    rank, world, path, shape = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], eval(sys.argv[4])
    dist.init_process_group("gloo", init_method="file://" + path, rank=rank, world_size=world,
                            timeout=timedelta(seconds=20))
    rng = np.random.default_rng(0)
    X = rng.standard_normal(shape) * 3 + 5  # a large mean: the variance must not cancel
    W = rng.standard_normal(shape)
    per = shape[0] // world
    sl = slice(rank * per, (rank + 1) * per)

    def close(got, want, what, tol=1e-9):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"rank {rank}: {what}")

    def make(cls):
        bn = cls(shape[1], momentum=0.3).double()
        with ember.no_grad():
            bn.weight.copy_(ember.tensor(np.linspace(0.5, 1.5, shape[1])))
            bn.bias.copy_(ember.tensor(np.linspace(-1, 1, shape[1])))
        return bn

    # the whole batch in one process
    ref = make(nn.BatchNorm1d if len(shape) == 3 else nn.BatchNorm2d)
    xr = ember.tensor(X).requires_grad_()
    out_ref = ref(xr)
    (out_ref * ember.tensor(W)).sum().backward()

    sync = make(nn.SyncBatchNorm)
    x = ember.tensor(X[sl]).requires_grad_()
    out = sync(x)
    assert out.grad_fn.name() == "_SyncBatchNormFunctionBackward", out.grad_fn.name()
    (out * ember.tensor(W[sl])).sum().backward()
    close(out.detach().numpy(), out_ref.detach().numpy()[sl], "output")
    close(x.grad.numpy(), xr.grad.numpy()[sl], "input gradient")
    for name in ("weight", "bias"):
        g = getattr(sync, name).grad.clone()
        dist.all_reduce(g)  # what DDP's averaging starts from
        close(g.numpy(), getattr(ref, name).grad.numpy(), name + " gradient")
    close(sync.running_mean.numpy(), ref.running_mean.numpy(), "running_mean")
    close(sync.running_var.numpy(), ref.running_var.numpy(), "running_var")
    assert int(sync.num_batches_tracked) == 1
    sync.eval()
    close(sync(x).detach().numpy(), ref.eval()(xr).detach().numpy()[sl], "eval output")
    dist.destroy_process_group()
    print("OK", flush=True)
''')


pytestmark = pytest.mark.skipif(not dist.is_gloo_available(),
                                reason="ember was built without gloo (install libgloo-dev and rebuild)")


@pytest.mark.parametrize("world,shape", [(2, (4, 3, 5, 2)), (3, (6, 2, 4))])
def test_sync_batchnorm_matches_batchnorm_on_the_whole_batch(tmp_path, world, shape):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    environ = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, str(script), str(r), str(world), str(tmp_path / "store"), repr(shape)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environ)
             for r in range(world)]
    require_ok(collect(procs, 60))


def test_one_process_is_batchnorm_and_conversion_keeps_the_parameters():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Sequential(nn.BatchNorm2d(4)))
    weight = model[1].weight
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], nn.SyncBatchNorm) and isinstance(converted[2][0], nn.SyncBatchNorm)
    assert converted[1].weight is weight and converted[1].running_mean is not None
    reference = nn.BatchNorm2d(4)
    x = ember.randn(2, 4, 5, 5)
    np.testing.assert_allclose(converted[1](x).detach().numpy(), reference(x).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(converted[1].running_var.numpy(), reference.running_var.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="expected at least 2D input"):
        nn.SyncBatchNorm(3)(ember.randn(3))
