"""CUDA against CPU for the training pieces added with Rprop, ASGD, Adafactor,
the lazy modules, fusion, get_total_norm, functional_call and DataParallel: the
same steps on both devices must end with the same parameters (and state).
Every test needs a CUDA GPU and skips, saying why, without one."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn import utils
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends

SHAPES = [(5, 7), (6,), ()]


def run(name, kwargs, device, steps=5):
    rng = np.random.default_rng(0)
    params = [ember.tensor(rng.uniform(-1, 1, size=s)).to(device).requires_grad_(True) for s in SHAPES]
    opt = getattr(ember.optim, name)(params, **kwargs)
    for step in range(steps):
        g = np.random.default_rng(step)
        for p in params:
            p.grad = ember.tensor(g.uniform(-1, 1, size=tuple(p.shape))).to(device)
        opt.step()
    return params, opt


@pytest.mark.parametrize("name, kwargs", [
    ("Rprop", dict(lr=0.05)),
    ("ASGD", dict(lr=0.1, t0=1, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.1, weight_decay=0.1)),
    ("Adafactor", dict(maximize=True)),
])
def test_optimizers_cuda_match_cpu(name, kwargs):
    cpu, cpu_opt = run(name, kwargs, "cpu")
    gpu, gpu_opt = run(name, kwargs, "cuda")
    for p, q in zip(cpu, gpu):
        assert q.device.type == "cuda"
        np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().numpy(), rtol=1e-9, atol=1e-12)
        for key, value in cpu_opt.state[p].items():
            np.testing.assert_allclose(gpu_opt.state[q][key].cpu().numpy(), value.numpy(), rtol=1e-9, atol=1e-12,
                                       err_msg=key)


def test_lazy_modules_materialize_on_cuda():
    ember.manual_seed(0)
    model = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
    model = model.cuda()
    x = ember.randn(2, 3, 6, 6)
    out = model(x.cuda())
    assert out.device.type == "cuda" and all(p.device.type == "cuda" for p in model.parameters())
    cpu_model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 2))
    cpu_model.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
    # the CUDA batch norm updated its statistics once; redo the CPU forward in eval mode on both
    model.eval(), cpu_model.eval()
    np.testing.assert_allclose(model(x.cuda()).detach().cpu().numpy(), cpu_model(x).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_fusion_total_norm_functional_call_and_data_parallel_on_cuda():
    ember.manual_seed(0)
    conv, bn = nn.Conv2d(3, 4, 3).cuda().eval(), nn.BatchNorm2d(4).cuda().eval()
    with ember.no_grad():
        bn.running_mean.copy_(ember.randn(4).cuda())
        bn.running_var.copy_(ember.rand(4).cuda() + 0.5)
    x = ember.randn(2, 3, 5, 5).cuda()
    fused = utils.fuse_conv_bn_eval(conv, bn)
    np.testing.assert_allclose(fused(x).detach().cpu().numpy(), bn(conv(x)).detach().cpu().numpy(), rtol=1e-4,
                               atol=1e-5)
    grads = [ember.randn(3, 4), ember.randn(5)]
    assert utils.get_total_norm([g.cuda() for g in grads]).item() == pytest.approx(
        utils.get_total_norm(grads).item(), rel=1e-5)
    lin = nn.Linear(3, 2).cuda()
    w = ember.ones(2, 3).cuda().requires_grad_(True)
    out = ember.func.functional_call(lin, {"weight": w}, (ember.ones(1, 3).cuda(),))
    out.sum().backward()
    assert w.grad.device.type == "cuda" and w.grad.cpu().tolist() == [[1.0] * 3] * 2
    dp = nn.DataParallel(nn.Linear(3, 2).cuda())
    y = dp(ember.ones(4, 3))  # the input moves to the module's GPU, as torch's single-device DataParallel
    assert y.device.type == "cuda" and tuple(y.shape) == (4, 2)
