"""ember.nn.utils: gradient clipping and parameter <-> vector conversion."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters


def params_with_grads(grads):
    ps = []
    for g in grads:
        p = nn.Parameter(ember.zeros(*np.shape(g)))
        p.grad = ember.tensor(np.asarray(g, dtype=np.float32))
        ps.append(p)
    return ps


def test_clip_grad_norm_scales_down():
    g1, g2 = np.array([3.0, 0.0]), np.array([[0.0, 4.0]])
    ps = params_with_grads([g1, g2])
    total = clip_grad_norm_(ps, max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(ps[0].grad.numpy(), g1 / 5.0, rtol=1e-5)
    np.testing.assert_allclose(ps[1].grad.numpy(), g2 / 5.0, rtol=1e-5)
    new_norm = math.sqrt(sum(float((p.grad ** 2).sum()) for p in ps))
    assert new_norm == pytest.approx(1.0, rel=1e-5)


def test_clip_grad_norm_leaves_small_grads():
    ps = params_with_grads([np.array([0.3, 0.4])])
    total = clip_grad_norm_(ps, 10.0)
    assert total.item() == pytest.approx(0.5)
    np.testing.assert_allclose(ps[0].grad.numpy(), [0.3, 0.4], rtol=1e-6)


def test_clip_grad_norm_other_norms_and_single_tensor():
    ps = params_with_grads([np.array([1.0, -3.0]), np.array([2.0])])
    assert clip_grad_norm_(ps, 100.0, norm_type=1).item() == pytest.approx(6.0)
    assert clip_grad_norm_(ps, 100.0, norm_type=float("inf")).item() == pytest.approx(3.0)
    p = params_with_grads([np.array([6.0, 8.0])])[0]
    assert clip_grad_norm_(p, 5.0).item() == pytest.approx(10.0)
    np.testing.assert_allclose(p.grad.numpy(), [3.0, 4.0], rtol=1e-5)
    assert clip_grad_norm_([nn.Parameter(ember.zeros(2))], 1.0).item() == 0.0  # no grads at all


def test_clip_grad_norm_nonfinite():
    ps = params_with_grads([np.array([np.inf, 1.0])])
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    assert math.isinf(clip_grad_norm_(ps, 1.0).item())
    # Scaled by the non-finite norm anyway, as PyTorch: inf * 0 is NaN, 1 * 0 is 0.
    grad = ps[0].grad.numpy()
    assert math.isnan(grad[0]) and grad[1] == 0.0


def test_clip_grad_norm_matches_torch_and_mixed_dtypes():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (5,), (2, 2, 2)]]
    for max_norm, norm_type in [(0.5, 2.0), (100.0, 2.0), (1.0, 1.0), (2.0, float("inf"))]:
        ps = params_with_grads(arrays)
        tps = [torch.nn.Parameter(torch.zeros(a.shape)) for a in arrays]
        for tp, a in zip(tps, arrays):
            tp.grad = torch.from_numpy(a.copy())
        total = clip_grad_norm_(ps, max_norm, norm_type)
        ttotal = torch.nn.utils.clip_grad_norm_(tps, max_norm, norm_type)
        assert total.item() == pytest.approx(ttotal.item(), rel=1e-6)
        for p, tp in zip(ps, tps):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6, atol=1e-7)
    half = nn.Parameter(ember.zeros(2, dtype=ember.float16))
    half.grad = ember.tensor([3.0, 4.0], dtype=ember.float16)
    clip_grad_norm_([half] + params_with_grads([np.array([0.0])]), 1.0)
    assert half.grad.dtype == ember.float16
    np.testing.assert_allclose(half.grad.float().numpy(), [0.6, 0.8], rtol=1e-3)


def test_clip_grad_value():
    ps = params_with_grads([np.array([-3.0, 0.5, 2.0])])
    clip_grad_value_(ps, 1.0)
    np.testing.assert_allclose(ps[0].grad.numpy(), [-1.0, 0.5, 1.0])


def test_parameters_to_vector_roundtrip():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = parameters_to_vector(model.parameters())
    assert vec.shape == (6 + 2 + 2 + 1,)
    expected = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])
    np.testing.assert_allclose(vec.detach().numpy(), expected)
    vector_to_parameters(ember.arange(11, dtype=ember.float32), model.parameters())
    np.testing.assert_allclose(model[0].weight.detach().numpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_allclose(model[1].bias.detach().numpy(), [10.0])
    assert isinstance(model[0].weight, nn.Parameter) and model[0].weight.requires_grad
    with pytest.raises(TypeError):
        vector_to_parameters([1.0], model.parameters())
