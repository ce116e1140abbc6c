"""The compositions of test_nn_extra2 / test_nn_padding / test_parametrize / test_swa_utils on CUDA
against the CPU path, forward and backward: losses, instance_norm with running statistics, unfold / fold,
embedding_bag (offsets on the GPU), padding modules, weight_norm / spectral_norm, AveragedModel,
gumbel_softmax and alpha_dropout. (The OpCase rows of those files also run through test_cuda_ops.)

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.utils import parametrizations
from ember.optim import swa_utils
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

RNG = np.random.default_rng(23)


def as_np(t):
    return t.detach().cpu().to(ember.float64).numpy()


def on_both(fn, arrays, dtype=ember.float64):
    """fn on CPU and CUDA copies of `arrays` (float arrays require grad): outputs and input gradients
    (of sum(out * fixed weights)) from both devices."""
    results = []
    for device in ("cpu", "cuda"):
        inputs = []
        for a in arrays:
            if np.issubdtype(a.dtype, np.floating):
                inputs.append(ember.tensor(a, dtype=dtype, device=device).requires_grad_(True))
            else:
                inputs.append(ember.tensor(a, device=device))
        out = fn(*inputs)
        w = ember.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype, device=device)
        (out * w).sum().backward()
        results.append((as_np(out), [as_np(t.grad) if t.grad is not None else None for t in inputs]))
    return results


def assert_same(results, rtol=1e-10, atol=1e-12):
    (cpu_out, cpu_grads), (gpu_out, gpu_grads) = results
    np.testing.assert_allclose(gpu_out, cpu_out, rtol=rtol, atol=atol)
    for g_cpu, g_gpu in zip(cpu_grads, gpu_grads):
        assert (g_cpu is None) == (g_gpu is None)
        if g_cpu is not None:
            np.testing.assert_allclose(g_gpu, g_cpu, rtol=rtol, atol=atol)


LOSSES = [
    ("margin_ranking", lambda a, b, y: F.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.2)),
    ("cosine_embedding", lambda a, b, y: F.cosine_embedding_loss(a, b, y, 0.1, reduction="none")),
    ("triplet", lambda a, b, y: F.triplet_margin_loss(a, b, a.flip(0), swap=True)),
    ("poisson", lambda a, b, y: F.poisson_nll_loss(a, b.abs(), full=True)),
    ("gaussian", lambda a, b, y: F.gaussian_nll_loss(a, b, y.abs().unsqueeze(1) + 0.1)),
    ("soft_margin", lambda a, b, y: F.soft_margin_loss(a, y.unsqueeze(1).expand(4, 5))),
    ("multilabel", lambda a, b, y: F.multilabel_soft_margin_loss(a, (b > 0).to(a.dtype))),
    ("multi_margin", lambda a, b, y: F.multi_margin_loss(a, ember.tensor([0, 3, 4, 1], device=a.device), p=2)),
    ("hinge", lambda a, b, y: F.hinge_embedding_loss(a, y.unsqueeze(1).expand(4, 5), reduction="sum")),
    ("multilabel_margin", lambda a, b, y: F.multilabel_margin_loss(
        a, ember.tensor([[3, 0, -1, 1, 2], [1, 4, 3, -1, 0], [-1, 1, 2, 0, 0], [2, 2, 0, 1, -1]], device=a.device))),
    ("triplet_distance", lambda a, b, y: F.triplet_margin_with_distance_loss(
        a, b, a.flip(0), distance_function=lambda u, v: ((u - v) ** 2).sum(-1), swap=True)),
]


@pytest.mark.parametrize("name,fn", LOSSES, ids=[n for n, _ in LOSSES])
def test_losses(name, fn):
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    y = np.array([1.0, -1.0, 1.0, -1.0])
    assert_same(on_both(lambda x, z: fn(x, z, ember.tensor(y, dtype=x.dtype, device=x.device)), [a, b]))


def test_activations_and_layers():
    x = RNG.standard_normal((2, 4, 5, 6))
    for fn in (lambda t: F.glu(t, 1), lambda t: F.selu(t), lambda t: F.celu(t, 0.5), lambda t: F.softmin(t, 1),
               lambda t: F.softshrink(t, 0.4), lambda t: F.hardshrink(t, 0.4), lambda t: F.tanhshrink(t),
               lambda t: F.threshold(t, 0.1, 2.0), lambda t: F.channel_shuffle(t, 2), lambda t: F.rrelu(t),
               lambda t: F.instance_norm(t), lambda t: F.local_response_norm(t, 3),
               lambda t: F.unfold(t, (2, 3), padding=1, stride=(2, 1)),
               lambda t: F.fold(F.unfold(t, 2, stride=1), (5, 6), 2, stride=1)):
        assert_same(on_both(fn, [x]))


def test_grid_sample_and_pools():
    x = RNG.standard_normal((2, 3, 5, 6))
    g = RNG.uniform(-1.3, 1.3, (2, 4, 3, 2))
    for mode in ("bilinear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            assert_same(on_both(lambda t, u: F.grid_sample(t, u, mode, padding, True), [x, g]))
    theta = RNG.standard_normal((2, 2, 3))
    assert_same(on_both(lambda t: F.affine_grid(t, (2, 3, 4, 5)), [theta]))
    assert_same(on_both(lambda t: F.lp_pool2d(t.abs() + 0.1, 2.0, 2), [x]))
    assert_same(on_both(lambda t: F.max_unpool2d(*F.max_pool2d(t, 2, return_indices=True), 2,
                                                 output_size=(5, 6)), [x]))
    assert_same(on_both(lambda t: F.pdist(t[0, 0]), [x]))


def test_padding_modules():
    x = RNG.standard_normal((2, 3, 4, 5))
    for module in (nn.ReflectionPad2d((1, 2, 3, 0)), nn.ReplicationPad2d(2), nn.CircularPad2d((1, 0, 2, 1)),
                   nn.ConstantPad2d(1, 3.5), nn.ZeroPad2d((0, 1, 1, 0))):
        assert_same(on_both(module, [x]))


def test_embedding_bag_with_offsets_on_the_gpu():
    w = RNG.standard_normal((10, 3))
    idx, offsets = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0]), np.array([0, 2, 2, 5])
    psw = RNG.standard_normal(9)
    for mode in ("sum", "mean", "max"):
        assert_same(on_both(lambda t, i, o: F.embedding_bag(i, t, o, mode=mode, padding_idx=4), [w, idx, offsets]))
    assert_same(on_both(lambda t, p, i, o: F.embedding_bag(i, t, o, mode="sum", per_sample_weights=p),
                        [w, psw, idx, offsets]))


def test_instance_norm_running_stats_on_the_gpu():
    x = RNG.standard_normal((3, 2, 7))
    stats = []
    for device in ("cpu", "cuda"):
        m = nn.InstanceNorm1d(2, affine=True, track_running_stats=True).double().to(device)
        m(ember.tensor(x, device=device))
        stats.append((as_np(m.running_mean), as_np(m.running_var)))
    for a, b in zip(*stats):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_weight_and_spectral_norm_on_the_gpu():
    x = RNG.standard_normal((2, 4))
    outs = []
    for device in ("cpu", "cuda"):
        ember.manual_seed(3)
        m = nn.Linear(4, 3).double()
        parametrizations.weight_norm(m)
        m = m.to(device)
        m(ember.tensor(x, device=device)).sum().backward()
        outs.append((as_np(m.weight), as_np(m.parametrizations.weight.original0.grad)))
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-10)
    s = parametrizations.spectral_norm(nn.Linear(5, 4).double().to("cuda"))
    for _ in range(30):
        w = as_np(s.weight)
    np.testing.assert_allclose(np.linalg.svd(w, compute_uv=False)[0], 1.0, rtol=1e-6)


def test_averaged_model_on_the_gpu():
    model = nn.Linear(3, 2).double()
    avg = swa_utils.AveragedModel(model, device="cuda", multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5))
    first = as_np(model.weight).copy()
    avg.update_parameters(model)
    with ember.no_grad():
        model.weight.add_(2.0)
    avg.update_parameters(model)
    assert avg.module.weight.device.type == "cuda"
    np.testing.assert_allclose(as_np(avg.module.weight), first + 1.0, rtol=1e-12)


def test_random_activations_on_the_gpu():
    ember.manual_seed(0)
    logits = ember.zeros(2000, 4, device="cuda")
    hard = F.gumbel_softmax(logits, hard=True)
    h = as_np(hard)
    assert np.all(h.sum(-1) == 1) and np.abs(h.mean(0) - 0.25).max() < 0.05
    out = F.alpha_dropout(ember.randn(100000, device="cuda"), 0.2, training=True)
    assert abs(float(out.mean())) < 0.03 and abs(float(out.std()) - 1) < 0.03
