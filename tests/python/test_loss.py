"""loss family from ember._C._nn: cross_entropy (class indices incl. multi-dim,
weights, ignore_index, label_smoothing, class probabilities), nll_loss,
mse/l1/smooth_l1, binary_cross_entropy (with and without logits, pos_weight)
and kl_div, against numpy references of torch's documented formulas, every
reduction, float64 gradcheck, numerical stability and errors; and, through
ember.nn.functional and the loss modules, torch's legacy size_average / reduce
arguments and its warning for a target of another size than the input."""
import math
import os
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as NF
from ember._C import _nn as F
from harness import OpCase, assert_close, make, parametrize_cases, random_array, table_tests, to_numpy, torch

FL = (np.float32, np.float64)
REDUCTIONS = ("none", "mean", "sum")


def np_reduce(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


def np_log_softmax(a, axis):
    a = a.astype(np.float64)
    m = np.max(a, axis=axis, keepdims=True)
    return a - m - np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))


def np_nll(logp, target, weight=None, ignore_index=-100, reduction="mean"):
    """torch's nll_loss: per element -w[t] * logp[t]; 'mean' divides by sum of w[t] over kept targets."""
    c = logp.shape[1] if logp.ndim > 1 else logp.shape[0]
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    if logp.ndim == 1:
        picked = logp[safe]
    else:
        picked = np.take_along_axis(logp, np.expand_dims(safe, 1), axis=1).squeeze(1)
    wt = w[safe] * keep
    loss = -picked * wt
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()


def np_cross_entropy(x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    cdim = 0 if x.ndim == 1 else 1
    c = x.shape[cdim]
    logp = np_log_softmax(x, cdim)
    wshape = [1] * x.ndim
    wshape[cdim] = c
    wv = np.ones(wshape) if weight is None else weight.astype(np.float64).reshape(wshape)
    if np.issubdtype(target.dtype, np.floating):  # probabilities
        t = target.astype(np.float64) * (1 - label_smoothing) + label_smoothing / c
        loss = -(logp * t * wv).sum(axis=cdim)
        return np_reduce(loss, reduction)
    nll = np_nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing == 0:
        return nll
    keep = target != ignore_index
    smooth = -(logp * wv).sum(axis=cdim) * keep
    if reduction == "none":
        red = smooth
    elif reduction == "sum":
        red = smooth.sum()
    else:
        w = np.ones(c) if weight is None else weight.astype(np.float64)
        red = smooth.sum() / (w[np.where(keep, target, 0)] * keep).sum()
    return (1 - label_smoothing) * nll + red * label_smoothing / c


def np_smooth_l1(x, y, beta):
    d = np.abs(x.astype(np.float64) - y)
    return d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


def np_bce(x, t, w=None):
    x = x.astype(np.float64)
    with np.errstate(divide="ignore"):
        loss = -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log(1 - x), -100))
    return loss if w is None else loss * w


def np_bce_logits(x, t, w=None, pos_weight=None):
    x = x.astype(np.float64)
    log_sig = -np.logaddexp(0, -x)       # log(sigmoid(x))
    log_1m_sig = -np.logaddexp(0, x)     # log(1 - sigmoid(x))
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * t * log_sig + (1 - t) * log_1m_sig)
    return loss if w is None else loss * w


def np_kl_div(x, t, reduction="mean", log_target=False):
    x, t = x.astype(np.float64), t.astype(np.float64)
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = np.where(t > 0, t * np.log(np.where(t > 0, t, 1)), 0) - t * x
    if reduction == "batchmean":
        return loss.sum() / x.shape[0]
    return np_reduce(loss, reduction)


def classes(t):  # class indices 0..2 from a float input in [0, 3)
    return t.long() if isinstance(t, ember.Tensor) else t.astype(np.int64)


CASES = [
    # Class-index targets come from the second (float, in [0, 3)) input.
    OpCase("cross_entropy_class", lambda x, t: F.cross_entropy(x, classes(t)),
           lambda x, t: np_cross_entropy(x, classes(t)), [[(4, 3), (4,)], [(2, 3, 5), (2, 5)], [(3,), ()]],
           dtypes=FL, domain=(0.0, 2.99), grad=False, rtol=1e-5, atol=1e-5),
    OpCase("cross_entropy_smooth_none", lambda x, t: F.cross_entropy(x, classes(t), reduction="none",
                                                                     label_smoothing=0.2),
           lambda x, t: np_cross_entropy(x, classes(t), reduction="none", label_smoothing=0.2),
           [[(4, 3), (4,)], [(2, 3, 2, 2), (2, 2, 2)]], dtypes=FL, domain=(0.0, 2.99), grad=False, atol=1e-5),
    OpCase("nll_loss_sum", lambda x, t: F.nll_loss(x, classes(t), reduction="sum"),
           lambda x, t: np_nll(x.astype(np.float64), classes(t), reduction="sum"), [[(4, 3), (4,)], [(2, 3, 4), (2, 4)]],
           dtypes=FL, domain=(0.0, 2.99), grad=False, atol=1e-5),
    OpCase("cross_entropy_probs", lambda x, t: F.cross_entropy(x, t), lambda x, t: np_cross_entropy(x, t),
           [[(4, 3), (4, 3)], [(2, 3, 4), (2, 3, 4)], [(5,), (5,)]], dtypes=FL, atol=1e-5),
    OpCase("cross_entropy_probs_smooth_sum", lambda x, t: F.cross_entropy(x, t, reduction="sum", label_smoothing=0.1),
           lambda x, t: np_cross_entropy(x, t, reduction="sum", label_smoothing=0.1), [[(4, 3), (4, 3)]], dtypes=FL,
           atol=1e-5),
    OpCase("mse_loss", lambda x, y: F.mse_loss(x, y), lambda x, y: np.mean((x.astype(np.float64) - y) ** 2),
           [[(3, 4), (3, 4)], [(5,), (5,)], [(), ()]], dtypes=FL),
    OpCase("mse_loss_none", lambda x, y: F.mse_loss(x, y, reduction="none"), lambda x, y: (x - y) ** 2,
           [[(3, 4), (3, 4)], [(2, 3), (2, 3)]], dtypes=FL),
    OpCase("l1_loss_sum", lambda x, y: F.l1_loss(x, y, reduction="sum"), lambda x, y: np.abs(x - y).sum(),
           [[(3, 4), (3, 4)]], dtypes=FL, atol=1e-5),
    OpCase("smooth_l1_loss", lambda x, y: F.smooth_l1_loss(x, y, reduction="none", beta=0.5),
           lambda x, y: np_smooth_l1(x, y, 0.5), [[(3, 4), (3, 4)], [(6,), (6,)]], dtypes=FL),
    OpCase("binary_cross_entropy", lambda x, t: F.binary_cross_entropy(x, t), lambda x, t: np.mean(np_bce(x, t)),
           [[(3, 4), (3, 4)], [(5,), (5,)]], dtypes=FL, domain=(0.05, 0.95)),
    OpCase("binary_cross_entropy_weighted", lambda x, t, w: F.binary_cross_entropy(x, t, w, reduction="none"),
           lambda x, t, w: np_bce(x, t, w), [[(3, 4), (3, 4), (4,)]], dtypes=FL, domain=(0.05, 0.95)),
    OpCase("bce_with_logits", lambda x, t: F.binary_cross_entropy_with_logits(x, t),
           lambda x, t: np.mean(np_bce_logits(x, t)), [[(3, 4), (3, 4)], [(5,), (5,)]], dtypes=FL),
    OpCase("bce_with_logits_weights", lambda x, t, w, pw: F.binary_cross_entropy_with_logits(
        x, t, w, reduction="none", pos_weight=pw), lambda x, t, w, pw: np_bce_logits(x, t, w, pw),
        [[(3, 4), (3, 4), (3, 1), (4,)]], dtypes=FL),
    OpCase("kl_div_batchmean", lambda x, t: F.kl_div(x, t, reduction="batchmean"),
           lambda x, t: np_kl_div(x, t, "batchmean"), [[(3, 4), (3, 4)]], dtypes=FL, domain=(0.05, 1.0),
           atol=1e-5),
    OpCase("kl_div_log_target", lambda x, t: F.kl_div(x, t, reduction="none", log_target=True),
           lambda x, t: np_kl_div(x, t, "none", True), [[(3, 4), (3, 4)], [(5,), (5,)]], dtypes=FL),
]

test_forward, test_gradcheck = table_tests(CASES)


# ---- cross_entropy / nll_loss in detail

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("shape", [(5, 4), (2, 4, 3), (2, 4, 2, 3)])
def test_cross_entropy_weights_ignore_index(reduction, smoothing, shape):
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape)
    tshape = (shape[0],) + shape[2:]
    t = rng.integers(0, 4, size=tshape)
    t.reshape(-1)[::3] = 2  # some ignored targets
    w = rng.uniform(0.5, 2.0, size=4)
    for weight in (None, w):
        got = F.cross_entropy(make(x), make(t), None if weight is None else make(weight),
                              ignore_index=2, reduction=reduction, label_smoothing=smoothing)
        expected = np_cross_entropy(x, t, weight, 2, reduction, smoothing)
        assert_close(got, expected, 1e-10, 1e-12, msg=f"{reduction} {smoothing} {weight is not None}")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_probability_targets_weighted(reduction):
    x = random_array((4, 5), np.float64)
    t = np.exp(random_array((4, 5), np.float64))
    t /= t.sum(1, keepdims=True)
    w = random_array((5,), np.float64, (0.5, 2.0))
    got = F.cross_entropy(make(x), make(t), make(w), reduction=reduction, label_smoothing=0.25)
    assert_close(got, np_cross_entropy(x, t, w, reduction=reduction, label_smoothing=0.25), 1e-10, 1e-12)


def test_cross_entropy_gradcheck():
    x = make(random_array((4, 3), np.float64), requires_grad=True)
    t = make([0, 2, 1, 2])
    w = make(random_array((3,), np.float64, (0.5, 2.0)))
    for reduction in REDUCTIONS:
        assert ember.autograd.gradcheck(
            lambda x: F.cross_entropy(x, t, w, ignore_index=1, reduction=reduction, label_smoothing=0.1), [x])
    x3 = make(random_array((2, 3, 4), np.float64), requires_grad=True)
    t3 = make([[0, 1, 2, 1], [2, 2, 0, 1]])
    assert ember.autograd.gradcheck(lambda x: F.cross_entropy(x, t3), [x3])
    p = make(random_array((2, 3, 4), np.float64, (0.0, 1.0)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, p: F.cross_entropy(x, p, label_smoothing=0.2), [x3, p])


def test_cross_entropy_double_backward():
    x = make(random_array((3, 4), np.float64), requires_grad=True)
    t = make([0, 3, 1])

    def first(x):
        (gx,) = ember.autograd.grad([F.cross_entropy(x, t)], [x], create_graph=True)
        return gx * gx
    assert ember.autograd.gradcheck(first, [x])


def test_cross_entropy_gradient_matches_softmax_minus_onehot():
    a = random_array((3, 4), np.float64)
    x = make(a, requires_grad=True)
    F.cross_entropy(x, make([1, 0, 3])).backward()
    p = np.exp(np_log_softmax(a, 1))
    p[np.arange(3), [1, 0, 3]] -= 1
    assert_close(x.grad, p / 3, 1e-12, 1e-12)


def test_cross_entropy_stable_for_huge_logits():
    x = ember.tensor([[1000.0, -1000.0, 0.0], [-1e4, 1e4, 0.0]])
    loss = F.cross_entropy(x, ember.tensor([0, 0]), reduction="none").numpy()
    assert_close(loss, np.array([0.0, 2e4]), 1e-6, 1e-4)
    assert np.isfinite(loss).all()


def test_cross_entropy_all_ignored_mean_is_nan():
    loss = F.cross_entropy(ember.randn(2, 3), ember.tensor([-100, -100]))
    assert math.isnan(loss.item())


def test_nll_loss_weights_and_ignore():
    logp = np_log_softmax(random_array((6, 4), np.float64), 1)
    t = np.array([0, 1, 3, 3, -100, 2])
    w = np.array([1.0, 2.0, 0.5, 3.0])
    for reduction in REDUCTIONS:
        got = F.nll_loss(make(logp), make(t), make(w), reduction=reduction)
        assert_close(got, np_nll(logp, t, w, -100, reduction), 1e-12, 1e-12)
    # legacy size_average / reduce, with torch's warning
    with pytest.warns(UserWarning, match="reduction='none' instead"):
        assert_close(F.nll_loss(make(logp), make(t), reduce=False), np_nll(logp, t, reduction="none"), 1e-12, 0)
    with pytest.warns(UserWarning, match="reduction='sum' instead"):
        assert_close(F.nll_loss(make(logp), make(t), size_average=False), np_nll(logp, t, reduction="sum"),
                     1e-12, 0)


def test_nll_loss_gradcheck():
    x = make(random_array((2, 3, 2), np.float64), requires_grad=True)
    t = make([[0, 2], [1, 1]])
    w = make(np.array([0.5, 1.0, 2.0]))
    assert ember.autograd.gradcheck(lambda x: F.nll_loss(x, t, w), [x])


def test_class_target_errors():
    x = ember.randn(3, 4)
    with pytest.raises(IndexError, match=r"^cross_entropy: target 4 is out of bounds for 4 classes"):
        F.cross_entropy(x, ember.tensor([0, 4, 1]))
    with pytest.raises(IndexError, match=r"^nll_loss: target -1 is out of bounds"):
        F.nll_loss(x, ember.tensor([0, -1, 1]))
    with pytest.raises(ValueError, match=r"^cross_entropy: expected input batch_size \(3\) to match target batch_size \(2\)"):
        F.cross_entropy(x, ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"^cross_entropy: size mismatch"):
        F.cross_entropy(ember.randn(2, 4, 3), ember.tensor([[0, 1], [1, 2]]))
    with pytest.raises(RuntimeError, match=r"^cross_entropy: class-probability targets must have the input's shape"):
        F.cross_entropy(x, ember.rand(3, 5))
    with pytest.raises(RuntimeError, match=r"^nll_loss: expected class-index targets of an integer dtype"):
        F.nll_loss(x, ember.rand(3))
    with pytest.raises(RuntimeError, match=r"^cross_entropy: weight should be defined for all 4 classes"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), ember.ones(3))
    with pytest.raises(ValueError, match=r"^cross_entropy: 'avg' is not a valid value for reduction"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), reduction="avg")
    with pytest.raises(RuntimeError, match=r"^cross_entropy: label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, ember.tensor([0, 1, 2]), label_smoothing=1.5)


# ---- pointwise losses

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_reductions(reduction):
    x = random_array((3, 4), np.float64, (0.05, 0.95))
    y = random_array((3, 4), np.float64, (0.0, 1.0))
    ex, ey = make(x), make(y)
    assert_close(F.mse_loss(ex, ey, reduction=reduction), np_reduce((x - y) ** 2, reduction), 1e-12, 1e-12)
    assert_close(F.l1_loss(ex, ey, reduction=reduction), np_reduce(np.abs(x - y), reduction), 1e-12, 1e-12)
    for beta in (0.0, 0.3, 1.0):
        assert_close(F.smooth_l1_loss(ex, ey, reduction=reduction, beta=beta),
                     np_reduce(np_smooth_l1(x, y, beta), reduction), 1e-12, 1e-12)
    assert_close(F.binary_cross_entropy(ex, ey, reduction=reduction), np_reduce(np_bce(x, y), reduction), 1e-12, 1e-12)
    assert_close(F.binary_cross_entropy_with_logits(ex, ey, reduction=reduction),
                 np_reduce(np_bce_logits(x, y), reduction), 1e-12, 1e-12)
    lx = np.log(x / x.sum(1, keepdims=True))
    for log_target in (False, True):
        assert_close(F.kl_div(make(lx), ey, reduction=reduction, log_target=log_target),
                     np_kl_div(lx, y, reduction, log_target), 1e-12, 1e-12)


def test_binary_cross_entropy_clamps_log():
    x = ember.tensor([0.0, 1.0, 0.0, 1.0])
    t = ember.tensor([0.0, 1.0, 1.0, 0.0])
    assert_close(F.binary_cross_entropy(x, t, reduction="none"), np.array([0.0, 0.0, 100.0, 100.0]), 0, 0)


def test_bce_with_logits_stable():
    x = ember.tensor([200.0, -200.0, 0.0], dtype=ember.float64)
    t = ember.tensor([0.0, 1.0, 0.5], dtype=ember.float64)
    assert_close(F.binary_cross_entropy_with_logits(x, t, reduction="none"), np.array([200.0, 200.0, math.log(2)]),
                 1e-12, 1e-12)


def test_kl_div_zero_target():
    x = ember.tensor([[-1.0, -2.0]], dtype=ember.float64, requires_grad=True)
    t = ember.tensor([[0.0, 1.0]], dtype=ember.float64, requires_grad=True)
    loss = F.kl_div(x, t, reduction="sum")
    assert_close(loss, np.array(2.0), 1e-12, 1e-12)
    loss.backward()
    assert np.isfinite(t.grad.numpy()).all()


def test_pointwise_gradcheck_all_arguments():
    x = make(random_array((3, 4), np.float64, (0.1, 0.9)), requires_grad=True)
    t = make(random_array((3, 4), np.float64, (0.1, 0.9)), requires_grad=True)
    w = make(random_array((4,), np.float64, (0.5, 2.0)), requires_grad=True)
    pw = make(random_array((4,), np.float64, (0.5, 2.0)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
                                    [x, t, w, pw])
    assert ember.autograd.gradcheck(lambda x, t, w: F.binary_cross_entropy(x, t, w, reduction="sum"), [x, t, w])
    assert ember.autograd.gradcheck(lambda x, t: F.kl_div(x, t, reduction="batchmean"), [x, t])
    assert ember.autograd.gradcheck(lambda x, t: F.kl_div(x, t, log_target=True), [x, t])
    assert ember.autograd.gradcheck(lambda x, t: F.smooth_l1_loss(x, t, beta=0.5), [x, t])


def test_pointwise_errors():
    with pytest.raises(ValueError, match=r"^binary_cross_entropy: target size \[3\] must be the same as input size \[2\]"):
        F.binary_cross_entropy(ember.rand(2), ember.rand(3))
    with pytest.raises(ValueError, match=r"^binary_cross_entropy_with_logits: target size"):
        F.binary_cross_entropy_with_logits(ember.rand(2, 2), ember.rand(2))
    with pytest.raises(RuntimeError, match=r"^binary_cross_entropy: all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([1.5]), ember.tensor([1.0]))
    for bad_target in (2.0, -0.1, float("nan")):  # PyTorch checks the target's range too
        with pytest.raises(RuntimeError, match=r"^binary_cross_entropy: all elements of target should be between 0"):
            F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([bad_target]))
    with pytest.raises(ValueError, match=r"^kl_div: 'batch' is not a valid value for reduction"):
        F.kl_div(ember.rand(2), ember.rand(2), reduction="batch")
    with pytest.raises(RuntimeError, match=r"^mse_loss: expected a floating point input, got int64"):
        F.mse_loss(ember.tensor([1, 2]), ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match=r"^smooth_l1_loss: beta must be non-negative"):
        F.smooth_l1_loss(ember.rand(2), ember.rand(2), beta=-1.0)


def test_cross_entropy_fused_gradcheck_weights_ignore():
    # label_smoothing=0 takes the fused kernel (forward and first-order backward).
    w = make(random_array((3,), np.float64, (0.5, 2.0)))
    for shape, t in [((4, 3), make([0, 2, 1, 2])), ((2, 3, 4), make([[0, 1, 2, 1], [2, 2, 0, 1]])), ((3,), make(2))]:
        x = make(random_array(shape, np.float64), requires_grad=True)
        for reduction in REDUCTIONS:
            assert ember.autograd.gradcheck(lambda x: F.cross_entropy(x, t, w, ignore_index=1, reduction=reduction),
                                            [x])


@pytest.mark.parametrize("shape", [(5, 4), (2, 4, 3)])
def test_cross_entropy_fused_backward_matches_create_graph(shape):
    a = random_array(shape, np.float64)
    rng = np.random.default_rng(5)
    t = make(rng.integers(0, 4, size=(shape[0],) + shape[2:]))
    w = make(np.array([0.5, 1.0, 2.0, 1.5]))
    grads = []
    for create_graph in (False, True):
        x = make(a, requires_grad=True)
        (g,) = ember.autograd.grad([F.cross_entropy(x, t, w, ignore_index=3)], [x], create_graph=create_graph)
        grads.append(g.detach().cpu().numpy())
    assert_close(grads[0], grads[1], 1e-12, 1e-14)


def test_cross_entropy_half_and_infinite_logits():
    x = ember.tensor([[1.0, 2.0, 3.0]], dtype=ember.float16)
    loss = F.cross_entropy(x, ember.tensor([2]))
    assert loss.dtype == ember.float16
    assert_close(loss.float(), np.array(-np_log_softmax(np.array([1.0, 2.0, 3.0]), 0)[2]), 1e-3, 1e-3)
    y = ember.tensor([[0.0, -math.inf, 1.0]])
    assert_close(F.cross_entropy(y, ember.tensor([2]), reduction="none"), np.array([math.log1p(math.exp(-1.0))]),
                 1e-6, 1e-6)
    assert F.cross_entropy(y, ember.tensor([1])).item() == math.inf


def test_binary_cross_entropy_gradient_at_the_edges():
    # torch's gradient w (x - t) / max(x (1 - x), 1e-12): finite where log is clamped.
    x = ember.tensor([0.0, 1.0, 0.5, 0.2], dtype=ember.float64, requires_grad=True)
    t = ember.tensor([0.0, 1.0, 1.0, 0.0], dtype=ember.float64)
    F.binary_cross_entropy(x, t, reduction="sum").backward()
    assert_close(x.grad, np.array([0.0, 0.0, -2.0, 0.2 / 0.16]), 1e-12, 1e-12)
    x = ember.tensor([0.0], dtype=ember.float64, requires_grad=True)
    F.binary_cross_entropy(x, ember.tensor([1.0], dtype=ember.float64)).backward()
    assert x.grad.item() == -1e12


def test_binary_cross_entropy_double_backward():
    x = make(random_array((3, 2), np.float64, (0.1, 0.9)), requires_grad=True)
    t = make(random_array((3, 2), np.float64, (0.0, 1.0)), requires_grad=True)

    def first(x, t):
        (gx,) = ember.autograd.grad([F.binary_cross_entropy(x, t)], [x], create_graph=True)
        return gx * gx
    assert ember.autograd.gradcheck(first, [x, t])


def test_bce_with_logits_gradient_at_zero_logits():
    # A zero-initialised output layer puts every logit at exactly 0: the gradient there is
    # sigmoid(0) - target (times the weights), not the zero that relu's and abs's kinks gave.
    x = make(np.zeros(4), requires_grad=True)
    target = make(np.array([1.0, 0.0, 1.0, 0.5]))
    weight, pos_weight = make(np.array([2.0, 3.0, 1.0, 1.0])), make(np.array([1.5, 2.0, 1.0, 4.0]))
    F.binary_cross_entropy_with_logits(x, target, weight=weight, pos_weight=pos_weight, reduction="sum").backward()
    t, w, p = np.array([1.0, 0.0, 1.0, 0.5]), np.array([2.0, 3.0, 1.0, 1.0]), np.array([1.5, 2.0, 1.0, 4.0])
    # d/dx [(1 - t) x + (1 + (p - 1) t) softplus(-x)] at 0 = (1 - t) - (1 + (p - 1) t) / 2
    assert_close(x.grad, w * ((1 - t) - (1 + (p - 1) * t) / 2))
    for kwargs in [{}, {"weight": weight}, {"pos_weight": pos_weight}]:
        assert ember.autograd.gradcheck(lambda v: F.binary_cross_entropy_with_logits(v, target, **kwargs),
                                        [make(np.zeros(4), requires_grad=True)])


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_with_every_target_ignored_has_a_zero_gradient(smoothing):
    # A micro-batch that is all padding: the mean over no targets is NaN (0/0, as in PyTorch), but
    # the gradient is 0 there, so backward() does not put NaN into every parameter.
    x = make(np.zeros((2, 3)), requires_grad=True)
    loss = F.cross_entropy(x, make(np.array([-100, -100])), label_smoothing=smoothing)
    assert np.isnan(loss.item())
    loss.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), np.zeros((2, 3)))
    x.grad = None
    F.nll_loss(ember.log_softmax(x, 1), make(np.array([-100, -100]))).backward()
    np.testing.assert_array_equal(to_numpy(x.grad), np.zeros((2, 3)))
    # One real target among ignored ones: an ordinary mean over it.
    x.grad = None
    F.cross_entropy(x, make(np.array([-100, 2])), label_smoothing=smoothing).backward()
    expected = np.full(3, 1 / 3) - ((1 - smoothing) * np.eye(3)[2] + smoothing / 3)
    assert_close(x.grad, np.stack([np.zeros(3), expected]))


# ---- legacy size_average / reduce, and the target-size warning (ember.nn.functional, nn modules)

LEGACY = [  # (size_average, reduce) -> the reduction torch maps them to
    ((None, False), "none"), ((False, None), "sum"), ((True, None), "mean"), ((False, False), "none"),
    ((True, True), "mean"), ((False, True), "sum"), ((0, 1), "sum")]


def _legacy_cases(lib):
    """(name, call(**reduction_kwargs)) of every functional loss that takes size_average / reduce."""
    rng = np.random.default_rng(3)
    x = lib.tensor(rng.uniform(0.1, 0.9, (4, 3)))
    y = lib.tensor(rng.uniform(0.1, 0.9, (4, 3)))
    sign = lib.tensor(np.where(rng.uniform(size=(4, 3)) > 0.5, 1.0, -1.0))
    cls = lib.tensor(np.array([0, 2, 1, 2]))
    sign4 = lib.tensor(np.array([1.0, -1.0, 1.0, -1.0]))
    labels = lib.tensor(np.array([[0, 2, -1], [1, -1, 0], [2, 1, 0], [-1, 0, 0]]))
    fn = lib.nn.functional
    return [
        ("mse_loss", lambda **kw: fn.mse_loss(x, y, **kw)),
        ("l1_loss", lambda **kw: fn.l1_loss(x, y, **kw)),
        ("smooth_l1_loss", lambda **kw: fn.smooth_l1_loss(x, y, **kw)),
        ("nll_loss", lambda **kw: fn.nll_loss(x.log(), cls, **kw)),
        ("kl_div", lambda **kw: fn.kl_div(x.log(), y, **kw)),
        ("poisson_nll_loss", lambda **kw: fn.poisson_nll_loss(x, y, **kw)),
        ("soft_margin_loss", lambda **kw: fn.soft_margin_loss(x, sign, **kw)),
        ("hinge_embedding_loss", lambda **kw: fn.hinge_embedding_loss(x, sign, **kw)),
        ("multilabel_margin_loss", lambda **kw: fn.multilabel_margin_loss(x, labels, **kw)),
        ("multilabel_soft_margin_loss", lambda **kw: fn.multilabel_soft_margin_loss(x, y, **kw)),
        ("cosine_embedding_loss", lambda **kw: fn.cosine_embedding_loss(x, y, sign4, **kw)),
        ("margin_ranking_loss", lambda **kw: fn.margin_ranking_loss(x, y, sign, **kw)),
        ("multi_margin_loss", lambda **kw: fn.multi_margin_loss(x, cls, **kw)),
        ("triplet_margin_loss", lambda **kw: fn.triplet_margin_loss(x, y, x.flip(0), **kw)),
    ]


EMBER_DIR = os.path.dirname(ember.__file__)  # warnings name the caller's file, not one of ember's


@pytest.mark.parametrize("legacy,reduction", LEGACY, ids=[f"{a}-{b}" for (a, b), _ in LEGACY])
def test_legacy_reduction_arguments_map_with_a_warning(legacy, reduction):
    size_average, reduce = legacy
    expected_warning = f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead."
    refs = dict(_legacy_cases(torch)) if torch is not None else {}
    for name, call in _legacy_cases(ember):
        with pytest.warns(UserWarning) as record:
            got = call(size_average=size_average, reduce=reduce, reduction="mean")
        assert [str(w.message) for w in record] == [expected_warning], name
        assert not record[0].filename.startswith(EMBER_DIR), name  # attributed to the caller, not to ember
        with warnings.catch_warnings():
            # The plain reduction warns about nothing (but kl_div's 'mean', as in torch).
            warnings.simplefilter("ignore" if (name, reduction) == ("kl_div", "mean") else "error")
            assert_close(got, call(reduction=reduction), 1e-12, 1e-12, msg=name)
        if torch is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = refs[name](size_average=size_average, reduce=reduce).numpy()
            assert_close(got, ref, 1e-10, 1e-12, msg=name)


def test_legacy_reduction_arguments_in_loss_modules():
    nn = ember.nn
    x, y = ember.tensor([[0.2, 0.7], [0.4, 0.9]]), ember.tensor([[0.1, 0.5], [0.8, 0.3]])
    for make_module, reduction in [(lambda: nn.MSELoss(size_average=False), "sum"),
                                   (lambda: nn.L1Loss(reduce=False), "none"),
                                   (lambda: nn.NLLLoss(size_average=True), "mean"),
                                   (lambda: nn.KLDivLoss(size_average=False), "sum"),
                                   (lambda: nn.CrossEntropyLoss(reduce=False), "none"),
                                   (lambda: nn.BCELoss(size_average=False, reduce=True), "sum"),
                                   (lambda: nn.SoftMarginLoss(reduce=False, size_average=True), "none"),
                                   (lambda: nn.MultiMarginLoss(size_average=False), "sum")]:
        with pytest.warns(UserWarning, match=f"please use reduction='{reduction}' instead"):
            module = make_module()
        assert module.reduction == reduction
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nn.MSELoss(reduction="sum").reduction == "sum"
        assert_close(nn.MSELoss(reduction="none")(x, y), (to_numpy(x) - to_numpy(y)) ** 2)
    with pytest.warns(UserWarning):
        assert_close(nn.MSELoss(size_average=False)(x, y), np.sum((to_numpy(x) - to_numpy(y)) ** 2))
    with pytest.raises(TypeError, match="mse_loss: size_average must be a bool or None, got str"):
        NF.mse_loss(x, y, size_average="a")
    with pytest.raises(TypeError, match="soft_margin_loss: reduce must be a bool or None, got list"):
        NF.soft_margin_loss(x, y, reduce=[])
    with pytest.raises(TypeError, match="MSELoss: reduce must be a bool or None, got str"):
        nn.MSELoss(reduce="no")
    from ember.nn import _reduction
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert _reduction.legacy_get_string(False, True) == "sum"
    assert _reduction.legacy_get_enum(None, False, emit_warning=False) == 0
    assert [_reduction.get_enum(r) for r in ("none", "mean", "sum")] == [0, 1, 2]
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        _reduction.get_enum("avg")


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
def test_target_of_another_size_warns(name):
    x = random_array((5, 1), np.float64)
    y = random_array((5,), np.float64)
    fn = getattr(NF, name)
    with pytest.warns(UserWarning, match=r"Using a target size \(ember.Size\(\[5\]\)\) that is different to the "
                                         r"input size \(ember.Size\(\[5, 1\]\)\). This will likely lead to "
                                         r"incorrect results due to broadcasting. Please ensure they have the same "
                                         r"size.") as record:
        got = fn(make(x), make(y), reduction="none")
    assert not record[0].filename.startswith(EMBER_DIR)  # the caller's line
    d = x - y  # [5, 5]: the broadcast torch warns about, still computed
    expected = {"mse_loss": d ** 2, "l1_loss": np.abs(d), "smooth_l1_loss": np_smooth_l1(x, y, 1.0),
                "huber_loss": np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)}[name]
    assert_close(got, expected, 1e-12, 1e-12)
    if torch is not None:
        with pytest.warns(UserWarning, match="Using a target size"):
            ref = getattr(torch.nn.functional, name)(torch.tensor(x), torch.tensor(y), reduction="none")
        assert_close(got, ref.numpy(), 1e-12, 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # same shapes: no warning
        fn(make(x), make(x))


def test_cpp_losses_warn_about_legacy_arguments_and_kl_div_about_mean():
    x, t = make(random_array((3, 4), np.float64)), make(np.array([0, 1, 3]))
    with pytest.warns(UserWarning, match=r"please use reduction='sum' instead") as record:
        got = NF.cross_entropy(x, t, size_average=False)
    assert not record[0].filename.startswith(EMBER_DIR)
    assert_close(got, NF.cross_entropy(x, t, reduction="sum"))
    with pytest.warns(UserWarning, match=r"please use reduction='none' instead"):
        NF.binary_cross_entropy_with_logits(x, make(np.ones((3, 4))), reduce=False)
    logp, p = NF.log_softmax(x, 1), NF.softmax(x, 1)
    with pytest.warns(UserWarning, match=r"kl_div: reduction='mean' divides the summed loss by the number of "
                                         r"elements"):
        NF.kl_div(logp, p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NF.kl_div(logp, p, reduction="batchmean")
        NF.cross_entropy(x, t)
