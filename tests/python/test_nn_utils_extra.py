"""nn.utils additions: conv/linear + batch-norm fusion, get_total_norm and
clip_grads_with_norm_, skip_init, functional_call (ember.func and
nn.utils.stateless), and nn.DataParallel on one device."""
import copy
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn import utils
from harness import torch


def trained_bn(bn, channels, shape):
    """A batch norm with non-trivial running statistics and affine parameters, in eval mode."""
    ember.manual_seed(1)
    for _ in range(3):
        bn(ember.randn(*shape) * 2 + 1)
    with ember.no_grad():
        if bn.affine:
            bn.weight.copy_(ember.rand(channels) + 0.5)
            bn.bias.copy_(ember.randn(channels))
    return bn.eval()


# ---- fusion

@pytest.mark.parametrize("conv, bn, shape", [
    (lambda: nn.Conv2d(3, 4, 3, padding=1), lambda: nn.BatchNorm2d(4), (2, 3, 5, 5)),
    (lambda: nn.Conv2d(4, 4, 3, groups=2, bias=False), lambda: nn.BatchNorm2d(4), (2, 4, 5, 5)),
    (lambda: nn.Conv1d(3, 5, 2), lambda: nn.BatchNorm1d(5), (2, 3, 6)),
    (lambda: nn.Conv2d(3, 4, 1), lambda: nn.BatchNorm2d(4, affine=False), (2, 3, 4, 4)),
])
def test_fuse_conv_bn_eval(conv, bn, shape):
    ember.manual_seed(0)
    conv = conv().eval()
    x = ember.randn(*shape)
    out_shape = conv(x).shape
    bn = trained_bn(bn(), out_shape[1], out_shape)
    fused = utils.fuse_conv_bn_eval(conv, bn)
    assert type(fused) is type(conv) and fused is not conv and fused.bias is not None
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    assert isinstance(fused.weight, nn.Parameter) and fused.weight.requires_grad


def test_fuse_conv_transpose_bn_eval():
    ember.manual_seed(0)
    conv = nn.ConvTranspose2d(3, 4, 2, stride=2).eval()
    x = ember.randn(2, 3, 3, 3)
    bn = trained_bn(nn.BatchNorm2d(4), 4, (2, 4, 6, 6))
    fused = utils.fuse_conv_bn_eval(conv, bn, transpose=True)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_fuse_linear_bn_eval():
    ember.manual_seed(0)
    linear = nn.Linear(3, 4).eval()
    bn = trained_bn(nn.BatchNorm1d(4), 4, (8, 4))
    fused = utils.fuse_linear_bn_eval(linear, bn)
    x = ember.randn(5, 3)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(linear(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    # no bias on the linear: the fused one gets one
    nobias = nn.Linear(3, 4, bias=False).eval()
    fused = utils.fuse_linear_bn_eval(nobias, bn)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(nobias(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_fuse_weights_formula_against_numpy():
    rng = np.random.default_rng(0)
    w, b = rng.normal(size=(4, 2, 3)), rng.normal(size=4)
    rm, rv, g, beta = rng.normal(size=4), rng.uniform(0.5, 2, 4), rng.normal(size=4), rng.normal(size=4)
    t = lambda a: ember.tensor(a)  # noqa: E731
    fw, fb = utils.fuse_conv_bn_weights(t(w), t(b), t(rm), t(rv), 1e-3, t(g), t(beta))
    scale = g / np.sqrt(rv + 1e-3)
    np.testing.assert_allclose(fw.detach().numpy(), w * scale[:, None, None], rtol=1e-12)
    np.testing.assert_allclose(fb.detach().numpy(), (b - rm) * scale + beta, rtol=1e-12)
    lw, lb = utils.fuse_linear_bn_weights(t(w[:, :, 0]), None, t(rm), t(rv), 1e-3, t(g), t(beta))
    np.testing.assert_allclose(lw.detach().numpy(), w[:, :, 0] * scale[:, None], rtol=1e-12)
    np.testing.assert_allclose(lb.detach().numpy(), -rm * scale + beta, rtol=1e-12)
    assert not lb.requires_grad  # made from zeros, as torch's


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_fusion_matches_torch():
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=(2, 4, 3, 3)), rng.normal(size=4), rng.normal(size=4), rng.uniform(0.5, 2, 4),
              rng.normal(size=4), rng.normal(size=4)]
    mine = utils.fuse_conv_bn_weights(*[ember.tensor(a) for a in arrays[:4]], 1e-5,
                                      *[ember.tensor(a) for a in arrays[4:]], transpose=True)
    theirs = torch.nn.utils.fuse_conv_bn_weights(*[torch.tensor(a) for a in arrays[:4]], 1e-5,
                                                 *[torch.tensor(a) for a in arrays[4:]], transpose=True)
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-12)


def test_fusion_errors():
    conv, bn = nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2)
    with pytest.raises(AssertionError, match="Fusion only for eval"):
        utils.fuse_conv_bn_eval(conv, bn.eval())
    with pytest.raises(AssertionError, match="out_features must equal bn.num_features"):
        utils.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(4).eval())


# ---- total norm and clipping in two halves

def params_with_grads(values):
    ps = []
    for v in values:
        p = nn.Parameter(ember.zeros(len(v)))
        p.grad = ember.tensor(v)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3])
def test_get_total_norm(norm_type):
    values = [[3.0, -4.0], [1.0], [-2.0, 0.5, 0.25]]
    flat = np.concatenate(values)
    expected = np.abs(flat).max() if norm_type == float("inf") else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    got = utils.get_total_norm([ember.tensor(v) for v in values], norm_type)
    assert got.item() == pytest.approx(expected, rel=1e-6)
    assert utils.get_total_norm([]).item() == 0.0


def test_clip_grads_with_norm_matches_clip_grad_norm_():
    a = params_with_grads([[3.0, -4.0], [12.0]])
    b = params_with_grads([[3.0, -4.0], [12.0]])
    total = utils.get_total_norm([p.grad for p in a])
    assert total.item() == pytest.approx(13.0)
    utils.clip_grads_with_norm_(a, 1.0, total)
    ref = utils.clip_grad_norm_(b, 1.0)
    assert ref.item() == pytest.approx(13.0)
    for p, q in zip(a, b):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(a[0].grad.numpy(), np.array([3.0, -4.0]) / (13 + 1e-6), rtol=1e-6)
    # a norm below max_norm leaves the gradients alone; a float total works too
    c = params_with_grads([[0.3, 0.4]])
    utils.clip_grads_with_norm_(c, 1.0, 0.5)
    np.testing.assert_allclose(c[0].grad.numpy(), [0.3, 0.4], rtol=1e-6)


def test_get_total_norm_nonfinite():
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.get_total_norm([ember.tensor([float("nan"), 1.0])], error_if_nonfinite=True)
    assert np.isnan(utils.get_total_norm([ember.tensor([float("nan")])]).item())


def test_deprecated_clip_grad_norm():
    ps = params_with_grads([[3.0, 4.0]])
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        assert utils.clip_grad_norm(ps, 10.0).item() == pytest.approx(5.0)


# ---- skip_init

def test_skip_init():
    m = utils.skip_init(nn.Linear, 3, 4, bias=False)
    assert type(m) is nn.Linear and tuple(m.weight.shape) == (4, 3) and m.bias is None
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    bn = utils.skip_init(nn.BatchNorm1d, 5, device="cpu")
    assert tuple(bn.running_mean.shape) == (5,)

    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        utils.skip_init(NoDevice, 2)


# ---- functional_call

class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False)
        self.b = nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight
        self.register_buffer("shift", ember.zeros(2))

    def forward(self, x, scale=1.0):
        return self.b(self.a(x)) * scale + self.shift


def test_functional_call_replaces_for_the_call_only_and_gradients_flow():
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    params = {k: ember.ones(*v.shape).requires_grad_(True) for k, v in model.named_parameters()}
    x = ember.tensor([[1.0, 2.0, 3.0]])
    out = ember.func.functional_call(model, params, (x,))
    # all ones: layer 0 gives 6 + 1 = 7 per unit, layer 2 gives 7 + 7 + 1
    assert out.item() == pytest.approx(15.0)
    out.sum().backward()
    assert params["2.weight"].grad.tolist() == [[7.0, 7.0]]
    assert params["0.weight"].grad.tolist() == [[1.0, 2.0, 3.0]] * 2
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())
    assert all(isinstance(p, nn.Parameter) for p in model.parameters())
    assert model[0].weight.grad is None  # the module's own parameters took no gradient


def test_functional_call_buffers_kwargs_several_dicts_and_single_arg():
    m = Tied()
    w = ember.eye(2)
    out = ember.func.functional_call(m, ({"a.weight": w}, {"shift": ember.tensor([1.0, 1.0])}),
                                     ember.tensor([[2.0, 3.0]]), {"scale": 2.0})
    assert out.tolist() == [[5.0, 7.0]]  # b's weight is tied to a's: also eye
    assert m.shift.tolist() == [0.0, 0.0]


def test_functional_call_tied_weights():
    m = Tied()
    with pytest.raises(ValueError, match="which are tied"):
        ember.func.functional_call(m, {"a.weight": ember.eye(2), "b.weight": 2 * ember.eye(2)},
                                   (ember.ones(1, 2),))
    out = ember.func.functional_call(m, {"a.weight": ember.eye(2), "b.weight": 2 * ember.eye(2)},
                                     (ember.ones(1, 2),), tie_weights=False)
    assert out.tolist() == [[2.0, 2.0]]
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        ember.func.functional_call(m, ({"shift": ember.ones(2)}, {"shift": ember.ones(2)}), (ember.ones(1, 2),))


def test_functional_call_strict_and_restores_after_an_error():
    m = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        ember.func.functional_call(m, {"weight": ember.eye(2)}, (ember.ones(1, 2),), strict=True)
    weight = m.weight
    with pytest.raises(RuntimeError):
        ember.func.functional_call(m, {"weight": ember.ones(3, 3)}, (ember.ones(1, 2),))
    assert m.weight is weight


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_functional_call_matches_torch():
    rng = np.random.default_rng(0)
    w1, b1, x = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(2, 3))
    m = nn.Linear(3, 4).double()
    tm = torch.nn.Linear(3, 4).double()
    mine = ember.func.functional_call(m, {"weight": ember.tensor(w1), "bias": ember.tensor(b1)}, ember.tensor(x))
    theirs = torch.func.functional_call(tm, {"weight": torch.tensor(w1), "bias": torch.tensor(b1)}, torch.tensor(x))
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-12)


def test_stateless_functional_call_is_deprecated_alias():
    m = nn.Linear(2, 1, bias=False)
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        out = utils.stateless.functional_call(m, {"weight": ember.tensor([[1.0, 1.0]])}, (ember.ones(1, 2),))
    assert out.item() == 2.0


# ---- DataParallel

def test_data_parallel_wraps_and_passes_through():
    # With a GPU, DataParallel wants the module on cuda:0 (a CPU module is refused, as in PyTorch).
    dev = "cuda" if ember.cuda.is_available() else "cpu"
    inner = nn.Linear(2, 3).to(dev)
    dp = nn.DataParallel(inner)
    assert dp.module is inner
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    x = ember.randn(4, 2, device=dev)
    np.testing.assert_array_equal(dp(x).detach().cpu().numpy(), inner(x).detach().cpu().numpy())
    # a checkpoint of the wrapped model loads into a fresh wrapper and (stripped) into the bare module
    fresh = nn.DataParallel(nn.Linear(2, 3).to(dev))
    fresh.load_state_dict(dp.state_dict())
    np.testing.assert_array_equal(fresh(x).detach().cpu().numpy(), dp(x).detach().cpu().numpy())
    bare = nn.Linear(2, 3)
    bare.load_state_dict({k[len("module."):]: v for k, v in dp.state_dict().items()})
    assert nn.parallel.data_parallel(inner, x).shape == (4, 3)
    dp(x).sum().backward()
    assert inner.weight.grad is not None
    assert isinstance(copy.deepcopy(dp).module, nn.Linear)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_data_parallel_state_dict_keys_like_torch():
    mine = nn.DataParallel(nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2)))
    assert list(mine.state_dict()) == list(theirs.state_dict())


def test_data_parallel_several_devices_points_to_ddp():
    with pytest.raises(NotImplementedError, match="DistributedDataParallel.*ember-run"):
        nn.DataParallel(nn.Linear(1, 1), device_ids=[0, 1])
