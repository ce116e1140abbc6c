"""ember.nn.utils.parametrize (register / remove / cached), parametrizations.weight_norm / spectral_norm and
the old-style nn.utils.weight_norm / remove_weight_norm: behaviour, gradients, state_dict keys, and torch
parity when torch is importable."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.autograd import gradcheck
from ember.nn.utils import parametrizations, parametrize
from harness import torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")


def npy(t):
    return t.detach().cpu().numpy()


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).t()

    def right_inverse(self, a):
        return a.triu()


class Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * self.s

    def right_inverse(self, x):
        return x / self.s


class SplitSum(nn.Module):
    """A tensor stored as two halves that add up to it."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, x):
        return x * 0.25, x * 0.75


def test_register_makes_a_property_and_moves_the_original():
    m = nn.Linear(3, 3).double()
    w0 = npy(m.weight).copy()
    original = m.weight
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert type(nn.Linear(2, 2)) is nn.Linear  # other instances keep their class
    # right_inverse stored triu(W) in the same Parameter object.
    assert m.parametrizations.weight.original is original
    np.testing.assert_allclose(npy(original), np.triu(w0))
    w = npy(m.weight)
    np.testing.assert_allclose(w, w.T)
    assert sorted(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "parametrizations.weight.original"]
    # Gradients reach the original through the parametrization.
    x = ember.tensor(np.random.default_rng(0).standard_normal((2, 3)))
    assert gradcheck(lambda o: nn.functional.linear(x, Symmetric()(o)), [ember.tensor(np.triu(w0), requires_grad=True)])
    m(x).sum().backward()
    g = npy(original.grad)
    assert np.allclose(np.tril(g, -1), 0) and np.abs(g).sum() > 0


def test_setter_uses_right_inverse_and_training_updates_the_original():
    m = nn.Linear(2, 2).double()
    parametrize.register_parametrization(m, "weight", Scale(2.0))
    m.weight = ember.tensor([[2.0, 4.0], [6.0, 8.0]], dtype=ember.float64)
    np.testing.assert_allclose(npy(m.parametrizations.weight.original), [[1, 2], [3, 4]])
    np.testing.assert_allclose(npy(m.weight), [[2, 4], [6, 8]])
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    m(ember.ones(1, 2, dtype=ember.float64)).sum().backward()
    opt.step()
    # d(sum(x W^T))/dW = 1, times the scale 2 on the way to the original.
    np.testing.assert_allclose(npy(m.parametrizations.weight.original), np.array([[1, 2], [3, 4]]) - 0.2)


def test_chaining_caching_and_removal():
    m = nn.Linear(2, 2).double()
    scale = Scale(3.0)
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "weight", scale)
    assert len(m.parametrizations.weight) == 2
    w = npy(m.weight)
    np.testing.assert_allclose(w, 3 * (np.triu(npy(m.parametrizations.weight.original))
                                       + np.triu(npy(m.parametrizations.weight.original), 1).T))
    scale.calls = 0
    with parametrize.cached():
        a, b = m.weight, m.weight
        assert a is b
    assert scale.calls == 1
    m.weight
    assert scale.calls == 2  # outside the context: recomputed on each read
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    np.testing.assert_allclose(npy(m.weight), w)
    assert isinstance(m.weight, nn.Parameter) and sorted(m.state_dict()) == ["bias", "weight"]


def test_remove_without_leaving_parametrized_and_buffers():
    m = nn.BatchNorm1d(3).double()
    parametrize.register_parametrization(m, "running_var", Scale(2.0))
    assert "parametrizations.running_var.original" in m.state_dict()
    np.testing.assert_allclose(npy(m.running_var), [1, 1, 1])
    parametrize.register_parametrization(m, "weight", Scale(4.0))
    parametrize.remove_parametrizations(m, "running_var", leave_parametrized=False)
    np.testing.assert_allclose(npy(m.running_var), [0.5, 0.5, 0.5])  # the stored original
    assert "running_var" in dict(m.named_buffers())
    assert parametrize.is_parametrized(m) and type(m).__name__ == "ParametrizedBatchNorm1d"
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.BatchNorm1d


def test_several_originals():
    m = nn.Linear(2, 3).double()
    w = npy(m.weight).copy()
    parametrize.register_parametrization(m, "weight", SplitSum())
    np.testing.assert_allclose(npy(m.parametrizations.weight.original0), 0.25 * w)
    np.testing.assert_allclose(npy(m.parametrizations.weight.original1), 0.75 * w)
    np.testing.assert_allclose(npy(m.weight), w)
    with pytest.raises(ValueError, match="sequence of tensors"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    np.testing.assert_allclose(npy(m.weight), w)


def test_register_errors():
    m = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="does not have a parameter"):
        parametrize.register_parametrization(m, "kernel", Scale(1.0))

    class Shrink(nn.Module):
        def forward(self, x):
            return x[0]

    with pytest.raises(ValueError, match="shape"):
        parametrize.register_parametrization(m, "weight", Shrink())
    assert not parametrize.is_parametrized(m) and type(m) is nn.Linear
    with pytest.raises(ValueError, match="does not have a parametrization"):
        parametrize.remove_parametrizations(m, "weight")
    with pytest.raises(TypeError, match="Module"):
        parametrize.register_parametrization(m, "weight", lambda x: x)
    parametrize.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert m.weight.shape == (2,)


def _norm_rows(w):
    return np.sqrt((w ** 2).sum(axis=tuple(range(1, w.ndim)), keepdims=True))


def test_weight_norm_parametrization():
    m = nn.Conv2d(2, 3, 2).double()
    w = npy(m.weight).copy()
    parametrizations.weight_norm(m)
    g = m.parametrizations.weight.original0
    v = m.parametrizations.weight.original1
    assert tuple(g.shape) == (3, 1, 1, 1)
    np.testing.assert_allclose(npy(g), _norm_rows(w))
    np.testing.assert_allclose(npy(m.weight), w, rtol=1e-12)
    with ember.no_grad():
        g.mul_(2.0)
    np.testing.assert_allclose(npy(m.weight), 2 * w, rtol=1e-12)
    vv = ember.tensor(npy(v), requires_grad=True)
    gg = ember.tensor(npy(g), requires_grad=True)
    assert gradcheck(lambda a, b: parametrizations._weight_norm(a, b, 0), [vv, gg])
    whole = parametrizations.weight_norm(nn.Linear(3, 2).double(), dim=None)
    assert whole.parametrizations.weight.original0.dim() == 0


def test_spectral_norm_parametrization():
    ember.manual_seed(0)
    m = parametrizations.spectral_norm(nn.Linear(5, 4).double())
    original = npy(m.parametrizations.weight.original)
    sigma = np.linalg.svd(original, compute_uv=False)[0]
    for _ in range(20):
        w = npy(m.weight)
    np.testing.assert_allclose(np.linalg.svd(w, compute_uv=False)[0], 1.0, rtol=1e-6)
    np.testing.assert_allclose(w, original / sigma, rtol=1e-6)
    # Eval mode freezes u and v: the same weight on every read.
    m.eval()
    u = npy(m.parametrizations.weight[0]._u).copy()
    m.weight
    np.testing.assert_array_equal(npy(m.parametrizations.weight[0]._u), u)
    assert "parametrizations.weight.0._u" in m.state_dict()
    # The gradient flows through sigma as well.
    m.train()
    m(ember.ones(2, 5, dtype=ember.float64)).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    conv_t = parametrizations.spectral_norm(nn.ConvTranspose2d(2, 3, 2).double())
    assert conv_t.parametrizations.weight[0].dim == 1
    with pytest.raises(ValueError, match="n_power_iterations"):
        parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_old_style_weight_norm():
    m = nn.Linear(4, 3).double()
    w = npy(m.weight).copy()
    nn.utils.weight_norm(m)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(npy(m.weight_g), _norm_rows(w))
    x = ember.ones(2, 4, dtype=ember.float64)
    with ember.no_grad():
        m.weight_g.mul_(3.0)
    np.testing.assert_allclose(npy(m(x)), np.ones((2, 4)) @ (3 * w).T + npy(m.bias), rtol=1e-12)
    m(x).sum().backward()
    assert m.weight_v.grad is not None and m.weight_g.grad is not None
    with pytest.raises(RuntimeError, match="two weight_norm"):
        nn.utils.weight_norm(m)
    nn.utils.remove_weight_norm(m)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
    np.testing.assert_allclose(npy(m.weight), 3 * w, rtol=1e-12)
    with pytest.raises(ValueError, match="weight_norm"):
        nn.utils.remove_weight_norm(m)


@needs_torch
def test_torch_parity_weight_norm_and_state_dict_keys():
    for dim in (0, 1, None):
        rng = np.random.default_rng(1)
        w = rng.standard_normal((3, 4, 2))
        v = rng.standard_normal((3, 4, 2))
        tm, em = torch.nn.Conv1d(4, 3, 2).double(), nn.Conv1d(4, 3, 2).double()
        with torch.no_grad():
            tm.weight.copy_(torch.tensor(w))
            tm.bias.zero_()
        with ember.no_grad():
            em.weight.copy_(ember.tensor(w))
            em.bias.zero_()
        torch.nn.utils.parametrizations.weight_norm(tm, dim=dim)
        parametrizations.weight_norm(em, dim=dim)
        assert sorted(tm.state_dict()) == sorted(em.state_dict())
        for name in ("original0", "original1"):
            np.testing.assert_allclose(npy(getattr(em.parametrizations.weight, name)),
                                       getattr(tm.parametrizations.weight, name).detach().numpy(), rtol=1e-12)
        with torch.no_grad():
            tm.parametrizations.weight.original1.copy_(torch.tensor(v))
        with ember.no_grad():
            em.parametrizations.weight.original1.copy_(ember.tensor(v))
        x = rng.standard_normal((2, 4, 5))
        tx, ex = torch.tensor(x), ember.tensor(x)
        tm(tx).square().sum().backward()
        em(ex).square().sum().backward()
        np.testing.assert_allclose(npy(em.weight), tm.weight.detach().numpy(), rtol=1e-12)
        for name in ("original0", "original1"):
            np.testing.assert_allclose(npy(getattr(em.parametrizations.weight, name).grad),
                                       getattr(tm.parametrizations.weight, name).grad.numpy(), rtol=1e-9)
    old_t, old_e = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2)), nn.utils.weight_norm(nn.Linear(3, 2))
    assert sorted(old_t.state_dict()) == sorted(old_e.state_dict())
    sn_t = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(3, 2))
    sn_e = parametrizations.spectral_norm(nn.Linear(3, 2))
    assert sorted(sn_t.state_dict()) == sorted(sn_e.state_dict())


def test_old_style_spectral_norm():
    ember.manual_seed(4)
    m = nn.utils.spectral_norm(nn.Linear(6, 4).double())
    assert sorted(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    x = ember.ones(2, 6, dtype=ember.float64)
    for _ in range(30):
        m(x)  # each training-mode call advances the power iteration
    w, orig = npy(m.weight), npy(m.weight_orig)
    np.testing.assert_allclose(w, orig / np.linalg.svd(orig, compute_uv=False)[0], rtol=1e-8)
    m(x).sum().backward()
    assert m.weight_orig.grad is not None
    m.eval()
    u = npy(m.weight_u).copy()
    m(x)
    np.testing.assert_array_equal(npy(m.weight_u), u)
    with pytest.raises(RuntimeError, match="two spectral_norm"):
        nn.utils.spectral_norm(m)
    nn.utils.remove_spectral_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(npy(m.weight), w, rtol=1e-8)
    with pytest.raises(ValueError, match="spectral_norm"):
        nn.utils.remove_spectral_norm(m)


@needs_torch
def test_old_style_spectral_norm_torch_parity():
    em = nn.utils.spectral_norm(nn.Conv2d(2, 3, 2).double())
    tm = torch.nn.utils.spectral_norm(torch.nn.Conv2d(2, 3, 2).double())
    with ember.no_grad():
        for name in ("weight_orig", "bias", "weight_u", "weight_v"):
            getattr(em, name).copy_(ember.tensor(getattr(tm, name).detach().numpy()))
    x = np.random.default_rng(6).standard_normal((2, 2, 4, 4))
    for _ in range(3):
        out_e, out_t = em(ember.tensor(x)), tm(torch.tensor(x))
        np.testing.assert_allclose(npy(out_e), out_t.detach().numpy(), rtol=1e-10, atol=1e-12)
    out_e.square().sum().backward()
    out_t.square().sum().backward()
    np.testing.assert_allclose(npy(em.weight_orig.grad), tm.weight_orig.grad.numpy(), rtol=1e-9, atol=1e-12)
