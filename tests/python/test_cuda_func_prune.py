"""ember.func transforms, nn.utils.prune and parametrizations.orthogonal on
CUDA tensors against the CPU (all compositions of ember ops).

Every test needs a CUDA GPU and skips, saying why, without one."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.utils.prune as prune
from ember.func import functional_call, grad, hessian, jacrev, jvp, vmap
from ember.nn.utils import parametrizations
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []


def host(t):
    return t.detach().cpu().numpy()


def test_per_sample_gradients_on_gpu():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x, y = ember.randn(5, 3), ember.tensor([0, 1, 1, 0, 1])
    results = {}
    for device in ("cpu", "cuda"):
        m = model.to(device)
        params = {k: v.detach() for k, v in m.named_parameters()}

        def loss_fn(p, sample, target):
            return nn.functional.cross_entropy(functional_call(m, p, (sample.unsqueeze(0),)), target.unsqueeze(0))
        results[device] = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, x.to(device), y.to(device))
    for name, g in results["cuda"].items():
        assert g.device.type == "cuda"
        np.testing.assert_allclose(host(g), host(results["cpu"][name]), rtol=1e-4, atol=1e-5)


def test_jacobians_on_gpu():
    x = ember.tensor([0.5, -1.2, 2.0], dtype=ember.float64)

    def f(v):
        return (v.sin() * v.exp()).sum()
    for fn in (grad(f), hessian(f), jacrev(lambda v: v.cumsum(0) * v)):
        np.testing.assert_allclose(host(fn(x.cuda())), host(fn(x)), rtol=1e-10)
    t = ember.tensor([1.0, 0.0, 2.0], dtype=ember.float64)
    np.testing.assert_allclose(host(jvp(lambda v: v.tanh(), (x.cuda(),), (t.cuda(),))[1]),
                               host(jvp(lambda v: v.tanh(), (x,), (t,))[1]), rtol=1e-10)


def test_prune_on_gpu():
    ember.manual_seed(1)
    cpu = nn.Linear(6, 4)
    gpu = nn.Linear(6, 4).cuda()
    with ember.no_grad():
        gpu.weight.copy_(cpu.weight.cuda())
        gpu.bias.copy_(cpu.bias.cuda())
    for m in (cpu, gpu):
        prune.l1_unstructured(m, "weight", amount=0.3)
        prune.ln_structured(m, "weight", amount=1, n=2, dim=0)
    assert gpu.weight_mask.device.type == "cuda"
    np.testing.assert_array_equal(host(gpu.weight_mask), host(cpu.weight_mask))
    x = ember.randn(3, 6)
    np.testing.assert_allclose(host(gpu(x.cuda())), host(cpu(x)), rtol=1e-5, atol=1e-6)
    prune.global_unstructured([(gpu, "bias")], prune.L1Unstructured, amount=2)
    assert int((host(gpu.bias_mask) == 0).sum()) == 2


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_on_gpu(orthogonal_map):
    m = parametrizations.orthogonal(nn.Linear(4, 6).cuda(), orthogonal_map=orthogonal_map)
    w = host(m.weight)
    np.testing.assert_allclose(w.T @ w, np.eye(4), atol=1e-5)
    m(ember.randn(2, 4).cuda()).sum().backward()
    assert m.parametrizations.weight.original.grad.device.type == "cuda"
