"""ctc_loss / CTCLoss: against a brute-force sum over every alignment (numpy), torch (when importable),
gradcheck in float64, impossible alignments, the reductions, and bad input."""
import itertools

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from harness import torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
RNG = np.random.default_rng(5)

CASES = []  # no OpCase rows: ctc_loss takes lengths and integer targets besides its tensor input


def collapse(path, blank):
    """An alignment's label sequence: merge repeats, then drop blanks."""
    merged = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
    return [k for k in merged if k != blank]


def brute_force_nll(log_probs, target, blank=0):
    """-log of the summed probability of every length-T path that collapses to `target`."""
    T, C = log_probs.shape
    total = 0.0
    for path in itertools.product(range(C), repeat=T):
        if collapse(list(path), blank) == list(target):
            total += np.exp(sum(log_probs[t, k] for t, k in enumerate(path)))
    return -np.log(total) if total > 0 else np.inf


def log_softmax(a, axis=-1):
    a = a - a.max(axis, keepdims=True)
    return a - np.log(np.exp(a).sum(axis, keepdims=True))


def test_matches_the_sum_over_all_alignments():
    T, N, C = 5, 4, 3
    lp = log_softmax(RNG.standard_normal((T, N, C)))
    targets = np.array([[1, 2, 0], [1, 1, 0], [2, 0, 0], [0, 0, 0]])  # includes a repeat (needs a blank)
    target_lengths, input_lengths = [2, 2, 1, 0], [5, 4, 3, 2]
    loss = F.ctc_loss(ember.tensor(lp), ember.tensor(targets), input_lengths, target_lengths, reduction="none")
    expected = [brute_force_nll(lp[:input_lengths[n], n], targets[n, :target_lengths[n]]) for n in range(N)]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-10)


def test_blank_index_other_than_zero():
    lp = log_softmax(RNG.standard_normal((4, 1, 3)))
    loss = F.ctc_loss(ember.tensor(lp), ember.tensor([[0, 1]]), [4], [2], blank=2, reduction="sum")
    np.testing.assert_allclose(float(loss), brute_force_nll(lp[:, 0], [0, 1], blank=2), rtol=1e-10)


def test_gradcheck():
    lp = ember.tensor(log_softmax(RNG.standard_normal((6, 3, 4))), requires_grad=True)
    targets = ember.tensor([[1, 1, 2], [3, 2, 0], [2, 0, 0]])
    assert ember.autograd.gradcheck(
        lambda x: F.ctc_loss(x, targets, [6, 5, 3], [3, 2, 1], reduction="none"), [lp])
    assert ember.autograd.gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), targets, [6, 5, 3], [3, 2, 1]), [lp])


def test_impossible_alignments_and_zero_infinity():
    lp = ember.tensor(log_softmax(RNG.standard_normal((3, 2, 4))), requires_grad=True)
    targets = ember.tensor([[1, 1, 2], [2, 0, 0]])  # 1,1,2 needs 4 frames (a blank between the 1s)
    loss = F.ctc_loss(lp, targets, [3, 3], [3, 1], reduction="none")
    assert np.isinf(loss.detach().numpy()[0]) and np.isfinite(loss.detach().numpy()[1])
    zeroed = F.ctc_loss(lp, targets, [3, 3], [3, 1], reduction="none", zero_infinity=True)
    assert float(zeroed[0]) == 0.0
    zeroed.sum().backward()
    grad = lp.grad.numpy()
    assert np.isfinite(grad).all()
    assert (grad[:, 0] == 0).all() and (grad[:, 1] != 0).any()


def test_reductions_targets_layouts_and_module():
    lp = ember.tensor(log_softmax(RNG.standard_normal((8, 3, 5))))
    padded = ember.tensor([[1, 2, 3, 4], [2, 2, 0, 0], [4, 0, 0, 0]])
    lengths = [4, 2, 1]
    none = F.ctc_loss(lp, padded, [8, 7, 6], lengths, reduction="none").numpy()
    concatenated = ember.tensor([1, 2, 3, 4, 2, 2, 4])
    np.testing.assert_allclose(F.ctc_loss(lp, concatenated, [8, 7, 6], lengths, reduction="none").numpy(), none)
    np.testing.assert_allclose(float(F.ctc_loss(lp, padded, [8, 7, 6], lengths, reduction="sum")), none.sum())
    np.testing.assert_allclose(float(nn.CTCLoss()(lp, padded, ember.tensor([8, 7, 6]), ember.tensor(lengths))),
                               (none / np.array(lengths)).mean(), rtol=1e-12)
    unbatched = F.ctc_loss(lp[:, 0], ember.tensor([1, 2, 3, 4]), [8], [4], reduction="none")
    np.testing.assert_allclose(float(unbatched), none[0], rtol=1e-12)


def test_float32_and_training_reduces_the_loss():
    ember.manual_seed(0)
    logits = ember.randn(12, 2, 5, requires_grad=True)
    targets = ember.tensor([[1, 2, 3], [4, 4, 1]])
    opt = ember.optim.Adam([logits], lr=0.3)
    losses = []
    for _ in range(20):
        loss = F.ctc_loss(logits.log_softmax(2), targets, [12, 12], [3, 3])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.2 * losses[0]


@pytest.mark.parametrize("call, error, message", [
    (lambda: F.ctc_loss(ember.randn(5, 2, 4), ember.ones(2, 3).long(), [5, 6], [3, 3]), RuntimeError,
     "at most 5"),
    (lambda: F.ctc_loss(ember.randn(5, 2, 4), ember.ones(2, 3).long(), [5, 5], [3, 4]), RuntimeError,
     "exceed"),
    (lambda: F.ctc_loss(ember.randn(5, 2, 4), ember.ones(2, 3).long(), [5], [3, 3]), RuntimeError,
     "one per batch"),
    (lambda: F.ctc_loss(ember.randn(5, 2, 4), ember.ones(2, 3).long(), [5, 5], [3, 3], blank=4), RuntimeError,
     "blank"),
    (lambda: F.ctc_loss(ember.randn(5, 2, 4), ember.full((2, 3), 7).long(), [5, 5], [3, 3]), IndexError,
     "labels"),
    (lambda: F.ctc_loss(ember.randn(5, 2, 4), ember.ones(2, 3).long(), [5, 5], [3, 3], reduction="avg"),
     ValueError, "reduction"),
    (lambda: F.ctc_loss(ember.ones(5, 2, 4).long(), ember.ones(2, 3).long(), [5, 5], [3, 3]), RuntimeError,
     "floating point"),
])
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


@needs_torch
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_matches_torch_loss_and_logit_gradients(reduction):
    """torch's log_probs gradient carries an extra exp(log_probs) that log_softmax cancels: compare the
    gradients of the logits."""
    T, N, C = 30, 4, 6
    logits = RNG.standard_normal((T, N, C))
    targets = RNG.integers(1, C, (N, 8))
    targets[0, 1] = targets[0, 0]
    lengths, input_lengths = [8, 3, 0, 5], [30, 20, 7, 12]
    xt = torch.tensor(logits, requires_grad=True)
    lt = torch.nn.functional.ctc_loss(xt.log_softmax(2), torch.tensor(targets), torch.tensor(input_lengths),
                                      torch.tensor(lengths), reduction=reduction)
    lt.sum().backward()
    xe = ember.tensor(logits, requires_grad=True)
    le = F.ctc_loss(xe.log_softmax(2), ember.tensor(targets), input_lengths, lengths, reduction=reduction)
    le.sum().backward()
    np.testing.assert_allclose(le.detach().numpy(), lt.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-12)


# ---- the C++ recursion (CPU, float32/float64) against the composite of ember ops


@pytest.fixture
def composite(monkeypatch):
    """Runs a call with the per-frame loop of ember ops instead of the C++ recursion."""
    import ember.nn._functional_ctc as ctc

    def run(fn):
        monkeypatch.setattr(ctc, "_NATIVE", False)
        try:
            return fn()
        finally:
            monkeypatch.setattr(ctc, "_NATIVE", True)
    return run


@pytest.mark.parametrize("dtype, tol", [(ember.float64, 1e-10), (ember.float32, 2e-5)])
@pytest.mark.parametrize("seed", range(4))
def test_native_recursion_matches_the_composite(composite, dtype, tol, seed):
    rng = np.random.default_rng(seed)
    T, N, C = 17, 6, 5
    logits = rng.standard_normal((T, N, C))
    targets = rng.integers(1, C, (N, 6))
    targets[0, 1:3] = targets[0, 0]  # repeats: the recursion may not skip between them
    target_lengths = [6, 4, 0, 1, 3, 6]
    input_lengths = [17, 9, 5, 1, 0, 11]  # sample 4 has no frames; sample 3 one frame for one label
    reduction = ["none", "sum", "mean", "none"][seed]

    def loss_and_grad():
        x = ember.tensor(logits, dtype=dtype, requires_grad=True)
        loss = F.ctc_loss(x.log_softmax(2), ember.tensor(targets), input_lengths, target_lengths,
                          reduction=reduction, zero_infinity=seed % 2 == 1)
        (loss * ember.arange(1, loss.numel() + 1, dtype=dtype).reshape(loss.shape)).sum().backward()
        return loss.detach().numpy(), x.grad.numpy()

    loss, grad = loss_and_grad()
    want_loss, want_grad = composite(loss_and_grad)
    np.testing.assert_allclose(loss, want_loss, rtol=tol, atol=tol)
    np.testing.assert_allclose(grad, want_grad, rtol=tol, atol=tol)


def test_native_recursion_impossible_sample_strided_input_and_double_backward():
    lp = ember.tensor(log_softmax(RNG.standard_normal((4, 3, 5))).transpose(1, 0, 2).copy()).transpose(0, 1)
    assert not lp.is_contiguous()
    lp.requires_grad_(True)
    targets = ember.tensor([[2, 2, 2], [1, 3, 0], [4, 0, 0]])  # 2,2,2 needs 5 frames: impossible in 4
    loss = F.ctc_loss(lp, targets, [4, 4, 2], [3, 2, 1], reduction="none")
    assert loss.grad_fn.name() == "CtcLossBackward0"
    assert np.isinf(float(loss[0])) and np.isfinite(loss.detach().numpy()[1:]).all()
    expected = [brute_force_nll(lp.detach().numpy()[:4, 1], [1, 3]), brute_force_nll(lp.detach().numpy()[:2, 2], [4])]
    np.testing.assert_allclose(loss.detach().numpy()[1:], expected, rtol=1e-10)
    loss[1:].sum().backward()
    assert (lp.grad.numpy()[:, 0] == 0).all() and (lp.grad.numpy()[2:, 2] == 0).all()
    (g,) = ember.autograd.grad(F.ctc_loss(lp, targets, [4, 4, 2], [3, 2, 1], reduction="none")[1:].sum(), [lp],
                               create_graph=True)
    with pytest.raises(RuntimeError, match="double backward through the CPU recursion"):
        g.sum().backward()
