"""ember.nn.utils.prune: masks computed as numpy says they should be, the
weight_orig / weight_mask / forward pre-hook layout and state_dict keys of
torch, masks combined over repeated pruning, global pruning, remove, errors;
against torch.nn.utils.prune where importable."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.utils.prune as prune
from harness import torch

CASES = []


def linear(weight, bias=None):
    w = np.asarray(weight, dtype=np.float32)
    m = nn.Linear(w.shape[1], w.shape[0], bias=bias is not None)
    with ember.no_grad():
        m.weight.copy_(ember.tensor(w))
        if bias is not None:
            m.bias.copy_(ember.tensor(np.asarray(bias, dtype=np.float32)))
    return m


W = np.array([[0.5, -0.1, 2.0, 0.05], [-3.0, 0.2, -0.3, 1.0], [0.7, -0.6, 0.01, 4.0]], dtype=np.float32)


def smallest_mask(values, k):
    mask = np.ones(values.size, dtype=np.float32)
    mask[np.argsort(np.abs(values).ravel(), kind="stable")[:k]] = 0
    return mask.reshape(values.shape)


def test_l1_unstructured_layout_and_forward():
    m = linear(W, bias=[0.1, 0.2, 0.3])
    assert prune.l1_unstructured(m, "weight", amount=0.25) is m
    want = smallest_mask(W, 3)  # round(0.25 * 12)
    np.testing.assert_array_equal(m.weight_mask.numpy(), want)
    np.testing.assert_array_equal(m.weight.detach().numpy(), W * want)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in m.named_buffers()] == ["weight_mask"]
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert "weight" not in m._parameters and prune.is_pruned(m)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    out = m(ember.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), x @ (W * want).T + [0.1, 0.2, 0.3], rtol=1e-5)
    out.sum().backward()
    grad = m.weight_orig.grad.numpy()
    assert (grad[want == 0] == 0).all() and (grad[want == 1] != 0).all()
    # the hook recomputes the weight from weight_orig before each call (after an optimizer step, say)
    with ember.no_grad():
        m.weight_orig.add_(1.0)
    m(ember.tensor(x))
    np.testing.assert_array_equal(m.weight.detach().numpy(), (W + 1) * want)


def test_amount_as_count_and_errors():
    m = linear(W)
    prune.l1_unstructured(m, "weight", amount=5)
    assert int((m.weight_mask.numpy() == 0).sum()) == 5
    with pytest.raises(TypeError, match="Invalid type for amount"):
        prune.l1_unstructured(linear(W), "weight", amount="half")
    with pytest.raises(ValueError, match="should either be a float in the range"):
        prune.l1_unstructured(linear(W), "weight", amount=1.5)
    with pytest.raises(ValueError, match="should either be a float in the range"):
        prune.random_unstructured(linear(W), "weight", amount=-1)
    m = linear(W)
    with pytest.raises(ValueError, match="should be smaller than the number of parameters to prune=12"):
        prune.l1_unstructured(m, "weight", amount=13)
    assert "weight" in m._parameters and not prune.is_pruned(m)  # a failed pruning leaves the module as it was
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(linear(W), "weight")
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional tensors"):
        prune.ln_structured(linear(W, bias=[0.0, 0.0, 0.0]), "bias", amount=1, n=2, dim=0)


def test_random_unstructured_and_structured():
    ember.manual_seed(0)
    m = linear(W)
    prune.random_unstructured(m, "weight", amount=0.5)
    assert int((m.weight_mask.numpy() == 0).sum()) == 6
    ember.manual_seed(0)
    m2 = linear(W)
    prune.random_unstructured(m2, "weight", amount=0.5)
    np.testing.assert_array_equal(m.weight_mask.numpy(), m2.weight_mask.numpy())  # seeded
    masks = set()
    for seed in range(5):
        ember.manual_seed(seed)
        m = linear(W)
        prune.random_structured(m, "weight", amount=2, dim=1)
        mask = m.weight_mask.numpy()
        cols = mask.all(0)
        assert cols.sum() == 2 and (mask[:, ~cols] == 0).all()  # whole columns pruned
        masks.add(tuple(cols))
    assert len(masks) > 1


@pytest.mark.parametrize("n,dim", [(1, 0), (2, 0), (float("inf"), 0), (2, 1), (1, -1)])
def test_ln_structured(n, dim):
    m = linear(W)
    prune.ln_structured(m, "weight", amount=1, n=n, dim=dim)
    axis = 1 - (dim % 2)
    norms = np.linalg.norm(W, ord=n, axis=axis)
    want = np.ones_like(W)
    if dim % 2 == 0:
        want[np.argmin(norms)] = 0
    else:
        want[:, np.argmin(norms)] = 0
    np.testing.assert_array_equal(m.weight_mask.numpy(), want)


def test_ln_structured_conv_weight():
    conv = nn.Conv2d(2, 4, 3)
    w = conv.weight.detach().numpy()
    prune.ln_structured(conv, "weight", amount=0.5, n=1, dim=0)
    norms = np.abs(w).reshape(4, -1).sum(1)
    kept = conv.weight_mask.numpy().reshape(4, -1).all(1)
    assert kept.sum() == 2 and set(np.argsort(norms)[2:]) == set(np.flatnonzero(kept))


def test_repeated_pruning_combines_masks():
    m = linear(W)
    prune.l1_unstructured(m, "weight", amount=3)
    first = m.weight_mask.numpy().copy()
    prune.ln_structured(m, "weight", amount=1, n=1, dim=0)
    hooks = [h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 2
    # the structured step picks among channels of the already-pruned weight and keeps the old zeros
    second = m.weight_mask.numpy()
    assert (second[first == 0] == 0).all()
    pruned_rows = ~second.any(1)
    assert pruned_rows.sum() == 1
    prune.l1_unstructured(m, "weight", amount=2)
    third = m.weight_mask.numpy()
    assert (third[second == 0] == 0).all() and (third == 0).sum() == (second == 0).sum() + 2
    # the two newly pruned are the smallest survivors
    survivors = np.abs(W)[second == 1]
    newly = np.abs(W)[(second == 1) & (third == 0)]
    np.testing.assert_array_equal(np.sort(newly), np.sort(survivors)[:2])
    np.testing.assert_array_equal(m.weight.detach().numpy(), W * third)
    assert list(m.state_dict()) == ["weight_orig", "weight_mask"]
    prune.remove(m, "weight")
    assert isinstance(m.weight, nn.Parameter) and not prune.is_pruned(m)
    np.testing.assert_array_equal(m.weight.detach().numpy(), W * third)
    assert list(m.state_dict()) == ["weight"]


def test_global_unstructured():
    a, b = linear(W), linear(W[:, :2] * 0.1)
    prune.global_unstructured([(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=8)
    both = np.concatenate([W.ravel(), (W[:, :2] * 0.1).ravel()])
    mask = smallest_mask(both, 8)
    np.testing.assert_array_equal(a.weight_mask.numpy().ravel(), mask[:12])
    np.testing.assert_array_equal(b.weight_mask.numpy().ravel(), mask[12:])
    assert list(b.state_dict()) == ["weight_orig", "weight_mask"]
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE'):
        prune.global_unstructured([(a, "weight")], pruning_method=prune.RandomStructured, amount=1)
    # importance scores rank instead of the weights
    c, d = linear(W), linear(W)
    scores = {(c, "weight"): ember.zeros(3, 4), (d, "weight"): ember.ones(3, 4)}
    prune.global_unstructured([(c, "weight"), (d, "weight")], prune.L1Unstructured, importance_scores=scores,
                              amount=12)
    assert (c.weight_mask.numpy() == 0).all() and (d.weight_mask.numpy() == 1).all()


def test_custom_from_mask_identity_and_importance_scores():
    mask = np.array([[1, 0, 1, 0]] * 3, dtype=np.float32)
    m = linear(W)
    prune.custom_from_mask(m, "weight", mask=ember.tensor(mask))
    np.testing.assert_array_equal(m.weight.detach().numpy(), W * mask)
    m = linear(W)
    prune.identity(m, "weight")
    np.testing.assert_array_equal(m.weight_mask.numpy(), np.ones_like(W))
    m = linear(W)
    scores = ember.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    prune.l1_unstructured(m, "weight", amount=4, importance_scores=scores)
    np.testing.assert_array_equal(m.weight_mask.numpy().ravel(), [0] * 4 + [1] * 8)
    with pytest.raises(ValueError, match="same shape"):
        prune.l1_unstructured(linear(W), "weight", amount=1, importance_scores=ember.zeros(2, 2))
    pruned = prune.L1Unstructured(amount=2).prune(ember.tensor(W))
    np.testing.assert_array_equal(pruned.numpy(), W * smallest_mask(W, 2))


def test_is_pruned_nested_and_state_dict_round_trip():
    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    assert not prune.is_pruned(net)
    prune.l1_unstructured(net[2], "weight", amount=0.5)
    assert prune.is_pruned(net)
    assert "2.weight_orig" in net.state_dict() and "2.weight_mask" in net.state_dict()
    other = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    prune.identity(other[2], "weight")
    other.load_state_dict(net.state_dict())
    x = ember.randn(5, 4)
    np.testing.assert_allclose(other(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_against_torch():
    import torch.nn.utils.prune as tprune
    m = linear(W)
    tm = torch.nn.Linear(4, 3, bias=False)
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(W))
    for ours, theirs in ((lambda: prune.l1_unstructured(m, "weight", amount=0.3),
                          lambda: tprune.l1_unstructured(tm, "weight", amount=0.3)),
                         (lambda: prune.ln_structured(m, "weight", amount=1, n=2, dim=1),
                          lambda: tprune.ln_structured(tm, "weight", amount=1, n=2, dim=1)),
                         (lambda: prune.l1_unstructured(m, "weight", amount=2),
                          lambda: tprune.l1_unstructured(tm, "weight", amount=2))):
        ours()
        theirs()
        np.testing.assert_array_equal(m.weight_mask.numpy(), tm.weight_mask.numpy())
    assert list(m.state_dict()) == list(tm.state_dict())
    prune.remove(m, "weight")
    tprune.remove(tm, "weight")
    np.testing.assert_array_equal(m.weight.detach().numpy(), tm.weight.detach().numpy())
