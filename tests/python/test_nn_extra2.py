"""The second batch of torch.nn.functional compositions: activations (glu, selu, celu, softmin, threshold,
tanhshrink, softshrink, hardshrink, channel_shuffle, gumbel_softmax, alpha_dropout), losses
(margin_ranking, cosine_embedding, triplet_margin, poisson_nll, gaussian_nll, soft_margin,
multilabel_soft_margin, multi_margin, hinge_embedding), instance_norm, local_response_norm, unfold / fold,
embedding_bag, and their modules: against numpy references (always), torch (when importable),
gradcheck in float64, and torch's exception types for bad input."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck
from harness import OpCase, table_tests, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
_F = (np.float32, np.float64)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def npy(t):
    return t.detach().cpu().numpy()


def _sig(a):
    return 1 / (1 + np.exp(-a))


def _logsig(a):
    return -np.logaddexp(0, -a)


def _red(loss, reduction="mean"):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](loss)


def _sign(a):
    return np.where(a > 0, 1.0, -1.0).astype(a.dtype)


def _esign(t):
    return ember.where(t > 0, ember.ones_like(t), -ember.ones_like(t))


# ---- numpy references ---------------------------------------------------------------------------------

def np_glu(a, dim):
    h = a.shape[dim] // 2
    first, second = np.split(a, [h], axis=dim)
    return first * _sig(second)


def np_softmin(a, dim):
    e = np.exp(-a - np.max(-a, axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def np_channel_shuffle(a, g):
    n, c = a.shape[:2]
    return a.reshape(n, g, c // g, *a.shape[2:]).swapaxes(1, 2).reshape(a.shape)


def np_cosine_embedding(a, b, y, margin):
    cos = (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-12) * ((b * b).sum(-1) + 1e-12))
    return np.where(y == 1, 1 - cos, np.maximum(cos - margin, 0))


def np_triplet(a, p, n, margin, norm, eps, swap):
    def dist(x, y):
        return (np.abs(x - y + eps) ** norm).sum(-1) ** (1 / norm)
    d_neg = dist(a, n)
    if swap:
        d_neg = np.minimum(d_neg, dist(p, n))
    return np.maximum(margin + dist(a, p) - d_neg, 0)


def np_poisson(x, t, log_input, full, eps=1e-8):
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        safe = np.where(t > 1, t, 1)
        loss = loss + np.where(t > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe), 0)
    return loss


def np_gaussian(x, t, var, full, eps=1e-6):
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - t) ** 2 / var)
    return loss + 0.5 * np.log(2 * np.pi) if full else loss


def np_multi_margin(x, y, p, margin, w=None):
    n, c = x.shape
    out = np.zeros(n, dtype=np.float64)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                z = max(0.0, margin - x[i, y[i]] + x[i, j]) ** p
                out[i] += z * (w[y[i]] if w is not None else 1.0)
    return (out / c).astype(x.dtype)


def np_instance_norm(a, w=None, b=None, eps=1e-5):
    axes = tuple(range(2, a.ndim))
    out = (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + eps)
    shape = (1, -1) + (1,) * (a.ndim - 2)
    if w is not None:
        out = out * w.reshape(shape) + b.reshape(shape)
    return out.astype(a.dtype)


def np_lrn(a, size, alpha=1e-4, beta=0.75, k=1.0):
    c = a.shape[1]
    sq = a.astype(np.float64) ** 2
    div = np.zeros_like(sq)
    for ch in range(c):
        for j in range(ch - size // 2, ch + (size - 1) // 2 + 1):
            if 0 <= j < c:
                div[:, ch] += sq[:, j]
    return (a / (k + alpha / size * div) ** beta).astype(a.dtype)


def np_unfold(a, kernel, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    x = np.pad(a, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c, h, w = x.shape
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c, kh, kw, oh, ow), dtype=a.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i, j] = x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
    return out.reshape(n, c * kh * kw, oh * ow)


def np_fold(cols, out_hw, kernel, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel, dilation, padding, stride
    n, ckk, _ = cols.shape
    c = ckk // (kh * kw)
    h, w = out_hw[0] + 2 * ph, out_hw[1] + 2 * pw
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    blocks = cols.reshape(n, c, kh, kw, oh, ow).astype(np.float64)
    out = np.zeros((n, c, h, w))
    for i in range(kh):
        for j in range(kw):
            for y in range(oh):
                for x in range(ow):
                    out[:, :, i * dh + y * sh, j * dw + x * sw] += blocks[:, :, i, j, y, x]
    return out[:, :, ph:ph + out_hw[0], pw:pw + out_hw[1]].astype(cols.dtype)


MLM_TARGET = np.array([[3, 0, -1, 1, 2], [1, 4, 3, 4, 0], [-1, 1, 2, 0, 0]])  # targets end at the first -1


def np_multilabel_margin(x, y):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        targets = []
        for v in y[i]:
            if v < 0:
                break
            targets.append(v)
        for j in targets:
            for k in range(c):
                if k not in targets:
                    out[i] += max(0.0, 1 - (x[i, j] - x[i, k]))
    return (out / c).astype(x.dtype)


BAG_INPUT = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0])
BAG_OFFSETS = np.array([0, 2, 2, 5])  # bags [1, 2], [], [4, 5, 4], [3, 2, 9, 0]


def np_embedding_bag(w, idx, offsets, mode, psw=None, padding_idx=None):
    ends = list(offsets[1:]) + [len(idx)]
    out = np.zeros((len(offsets), w.shape[1]), dtype=np.float64)
    for b, (s, e) in enumerate(zip(offsets, ends)):
        rows = [w[idx[i]] * (psw[i] if psw is not None else 1.0) for i in range(s, e) if idx[i] != padding_idx]
        if rows:
            out[b] = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode](np.stack(rows), axis=0)
    return out.astype(w.dtype)


def _bag(mode, **kw):
    def run(w):
        return F.embedding_bag(ember.tensor(BAG_INPUT, device=w.device), w,
                               ember.tensor(BAG_OFFSETS, device=w.device), mode=mode, **kw)
    return run


def _l1_distance(u, v):
    return (u - v).abs().sum(-1)


def _as_class(t, c):
    """A random float tensor as int64 class labels 0 .. c - 1 (values drawn from [-2, 2])."""
    return ember.clamp((t.abs() * (c / 2.0)).to(ember.int64), max=c - 1)


def _np_class(a, c):
    return np.minimum((np.abs(a) * np.float32(c / 2.0)).astype(np.int64), c - 1)


CASES = [
    OpCase("glu", lambda x: F.glu(x), lambda a: np_glu(a, -1), [[(3, 4)], [(2, 3, 6)]], dtypes=_F),
    OpCase("glu_dim1", lambda x: F.glu(x, 1), lambda a: np_glu(a, 1), [[(2, 4, 3)]], dtypes=_F),
    OpCase("selu", F.selu, lambda a: SELU_SCALE * np.where(a > 0, a, SELU_ALPHA * np.expm1(a)),
           [[(3, 4)], [()]], dtypes=_F),
    OpCase("celu", lambda x: F.celu(x, 0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a / 0.7)),
           [[(3, 4)], [(5,)]], dtypes=_F),
    OpCase("softmin", lambda x: F.softmin(x, 1), lambda a: np_softmin(a, 1), [[(3, 4)], [(2, 3, 2)]], dtypes=_F),
    OpCase("threshold", lambda x: F.threshold(x, 0.25, -3.0), lambda a: np.where(a > 0.25, a, -3.0).astype(a.dtype),
           [[(3, 4)]], dtypes=_F),
    OpCase("tanhshrink", F.tanhshrink, lambda a: a - np.tanh(a), [[(3, 4)], [()]], dtypes=_F),
    OpCase("softshrink", lambda x: F.softshrink(x, 0.3),
           lambda a: np.where(a > 0.3, a - 0.3, np.where(a < -0.3, a + 0.3, 0)).astype(a.dtype), [[(3, 4)]],
           dtypes=_F),
    OpCase("hardshrink", lambda x: F.hardshrink(x, 0.3), lambda a: np.where(np.abs(a) > 0.3, a, 0).astype(a.dtype),
           [[(3, 4)]], dtypes=_F),
    OpCase("channel_shuffle", lambda x: F.channel_shuffle(x, 3), lambda a: np_channel_shuffle(a, 3),
           [[(2, 6, 2)], [(1, 3, 2, 2)]], dtypes=_F),
    OpCase("margin_ranking_loss", lambda a, b, y: F.margin_ranking_loss(a, b, _esign(y), 0.3),
           lambda a, b, y: _red(np.maximum(-_sign(y) * (a - b) + 0.3, 0)), [[(5,), (5,), (5,)]], dtypes=_F),
    OpCase("cosine_embedding_loss", lambda a, b, y: F.cosine_embedding_loss(a, b, _esign(y), 0.2, reduction="none"),
           lambda a, b, y: np_cosine_embedding(a, b, _sign(y), 0.2), [[(4, 3), (4, 3), (4,)], [(3,), (3,), ()]],
           dtypes=_F),
    OpCase("triplet_margin_loss", lambda a, p, n: F.triplet_margin_loss(a, p, n, 0.5),
           lambda a, p, n: _red(np_triplet(a, p, n, 0.5, 2, 1e-6, False)), [[(4, 3), (4, 3), (4, 3)]], dtypes=_F),
    OpCase("triplet_margin_loss_p3_swap", lambda a, p, n: F.triplet_margin_loss(a, p, n, 1.5, p=3, swap=True,
                                                                                reduction="sum"),
           lambda a, p, n: _red(np_triplet(a, p, n, 1.5, 3, 1e-6, True), "sum"), [[(4, 3), (4, 3), (4, 3)]],
           dtypes=_F, rtol=1e-4),
    OpCase("poisson_nll_loss_full", lambda x, t: F.poisson_nll_loss(x, t.abs() * 2, full=True, reduction="none"),
           lambda x, t: np_poisson(x, np.abs(t) * 2, True, True), [[(3, 4), (3, 4)]], dtypes=_F, rtol=1e-4),
    OpCase("poisson_nll_loss_rate", lambda x, t: F.poisson_nll_loss(x.abs() + 0.1, t.abs(), log_input=False),
           lambda x, t: _red(np_poisson(np.abs(x) + 0.1, np.abs(t), False, False)), [[(3, 4), (3, 4)]], dtypes=_F,
           rtol=1e-4),
    OpCase("gaussian_nll_loss", lambda x, t, v: F.gaussian_nll_loss(x, t, v.abs() + 0.05, reduction="none"),
           lambda x, t, v: np_gaussian(x, t, np.abs(v) + 0.05, False), [[(3, 4), (3, 4), (3, 4)]], dtypes=_F,
           rtol=1e-4),
    OpCase("gaussian_nll_loss_shared_var", lambda x, t, v: F.gaussian_nll_loss(x, t, v.abs(), full=True),
           lambda x, t, v: _red(np_gaussian(x, t, np.abs(v)[:, None], True)), [[(3, 4), (3, 4), (3,)]], dtypes=_F,
           rtol=1e-4),
    OpCase("soft_margin_loss", lambda x, y: F.soft_margin_loss(x, _esign(y)),
           lambda x, y: _red(np.log1p(np.exp(-_sign(y) * x))), [[(3, 4), (3, 4)]], dtypes=_F),
    OpCase("multilabel_soft_margin_loss",
           lambda x, y, w: F.multilabel_soft_margin_loss(x, (y > 0).to(x.dtype), weight=w, reduction="none"),
           lambda x, y, w: (-((y > 0) * _logsig(x) + (y <= 0) * _logsig(-x)) * w).mean(-1),
           [[(3, 4), (3, 4), (4,)]], dtypes=_F),
    OpCase("multi_margin_loss", lambda x, y: F.multi_margin_loss(x, _as_class(y, 5), reduction="none"),
           lambda x, y: np_multi_margin(x, _np_class(y, 5), 1, 1.0), [[(4, 5), (4,)]], dtypes=_F),
    OpCase("multi_margin_loss_p2_weight", lambda x, y, w: F.multi_margin_loss(x, _as_class(y, 5), p=2, margin=0.5,
                                                                             weight=w, reduction="sum"),
           lambda x, y, w: np_multi_margin(x, _np_class(y, 5), 2, 0.5, w).sum(), [[(4, 5), (4,), (5,)]], dtypes=_F,
           rtol=1e-4),
    OpCase("hinge_embedding_loss", lambda x, y: F.hinge_embedding_loss(x, _esign(y), 0.7, reduction="none"),
           lambda x, y: np.where(_sign(y) == 1, x, np.maximum(0.7 - x, 0)), [[(3, 4), (3, 4)]], dtypes=_F),
    OpCase("instance_norm", lambda x: F.instance_norm(x), np_instance_norm, [[(2, 3, 5)], [(2, 2, 3, 4)]],
           dtypes=_F, rtol=1e-4, atol=1e-5),
    OpCase("instance_norm_affine", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
           lambda x, w, b: np_instance_norm(x, w, b), [[(2, 3, 5), (3,), (3,)]], dtypes=_F, rtol=1e-4, atol=1e-5),
    OpCase("local_response_norm", lambda x: F.local_response_norm(x, 3, alpha=0.5), lambda a: np_lrn(a, 3, 0.5),
           [[(2, 5, 4)], [(1, 4, 2, 3)]], dtypes=_F, rtol=1e-4),
    OpCase("unfold", lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
           lambda a: np_unfold(a, (2, 3), (1, 2), (1, 1), (2, 1)), [[(2, 3, 5, 6)]], dtypes=_F),
    OpCase("unfold_plain", lambda x: F.unfold(x, 2), lambda a: np_unfold(a, (2, 2), (1, 1), (0, 0), (1, 1)),
           [[(1, 2, 3, 4)]], dtypes=_F),
    OpCase("fold", lambda x: F.fold(x, (4, 5), 2, padding=1, stride=(2, 1)),
           lambda a: np_fold(a, (4, 5), (2, 2), (1, 1), (1, 1), (2, 1)), [[(2, 8, 18)]], dtypes=_F),
    OpCase("embedding_bag_sum", _bag("sum"), lambda w: np_embedding_bag(w, BAG_INPUT, BAG_OFFSETS, "sum"),
           [[(10, 3)]], dtypes=_F),
    OpCase("embedding_bag_mean_padding", _bag("mean", padding_idx=4),
           lambda w: np_embedding_bag(w, BAG_INPUT, BAG_OFFSETS, "mean", padding_idx=4), [[(10, 3)]], dtypes=_F),
    OpCase("embedding_bag_max", _bag("max"), lambda w: np_embedding_bag(w, BAG_INPUT, BAG_OFFSETS, "max"),
           [[(10, 3)]], dtypes=_F),
    OpCase("rrelu_eval", lambda x: F.rrelu(x, 0.1, 0.3), lambda a: np.where(a >= 0, a, a * 0.2).astype(a.dtype),
           [[(3, 4)]], dtypes=_F),
    OpCase("multilabel_margin_loss", lambda x: F.multilabel_margin_loss(x, ember.tensor(MLM_TARGET, device=x.device),
                                                                        reduction="none"),
           lambda x: np_multilabel_margin(x, MLM_TARGET), [[(3, 5)]], dtypes=_F),
    OpCase("triplet_margin_with_distance_loss",
           lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, distance_function=_l1_distance, margin=2.0,
                                                               swap=True, reduction="none"),
           lambda a, p, n: np.maximum(2.0 + np.abs(a - p).sum(-1) - np.minimum(np.abs(a - n).sum(-1),
                                                                                 np.abs(p - n).sum(-1)), 0),
           [[(4, 3), (4, 3), (4, 3)]], dtypes=_F),
]
test_table_forward, test_table_gradcheck = table_tests(CASES)


# ---- behaviour beyond the table -------------------------------------------------------------------------

def test_gumbel_softmax_soft_and_hard():
    ember.manual_seed(0)
    logits = ember.tensor(np.log(np.array([[0.1, 0.6, 0.3]] * 4000)), requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(npy(soft.sum(-1)), 1.0, rtol=1e-6)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = npy(hard)
    assert set(np.unique(h)) <= {0.0, 1.0} and np.all(h.sum(-1) == 1)
    # One-hot samples follow softmax(logits): the Gumbel-max trick.
    np.testing.assert_allclose(h.mean(0), [0.1, 0.6, 0.3], atol=0.03)
    (hard * ember.tensor([1.0, 2.0, 3.0], dtype=ember.float64)).sum().backward()
    assert logits.grad is not None and np.abs(npy(logits.grad)).sum() > 0  # straight-through gradient


def test_alpha_dropout_keeps_mean_and_variance():
    ember.manual_seed(1)
    x = ember.randn(200000)
    out = F.alpha_dropout(x, 0.3, training=True)
    assert abs(float(out.mean())) < 0.02 and abs(float(out.std()) - 1.0) < 0.02
    # Kept units are a * x + s a p, dropped ones all take -s a + s a p (s = SELU's saturation).
    s, p = SELU_ALPHA * SELU_SCALE, 0.3
    a = 1 / math.sqrt((s * s * p + 1) * (1 - p))
    o, xv = npy(out), npy(x)
    dropped = np.isclose(o, -s * a + s * a * p, rtol=0, atol=1e-6)
    assert abs(dropped.mean() - p) < 0.01
    np.testing.assert_allclose(o[~dropped], a * xv[~dropped] + s * a * p, rtol=1e-5, atol=1e-6)
    assert F.alpha_dropout(x, 0.3, training=False) is x
    m = nn.AlphaDropout(0.2)
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="probability"):
        F.alpha_dropout(x, 1.5, True)


def test_activation_modules_match_functionals():
    x = ember.tensor(np.linspace(-3, 3, 24).reshape(2, 3, 4))
    a = npy(x)
    pairs = [(nn.GLU(1), None), (nn.SELU(), F.selu(x)), (nn.CELU(0.5), F.celu(x, 0.5)),
             (nn.Softmin(2), F.softmin(x, 2)),
             (nn.Softsign(), a / (1 + np.abs(a))), (nn.Hardsigmoid(), np.clip(a / 6 + 0.5, 0, 1)),
             (nn.Threshold(0.1, 20.0), np.where(a > 0.1, a, 20.0)), (nn.Tanhshrink(), a - np.tanh(a)),
             (nn.Softshrink(1.0), F.softshrink(x, 1.0)), (nn.Hardshrink(1.0), np.where(np.abs(a) > 1, a, 0)),
             (nn.Softmax2d(), F.softmax(x, -3)), (nn.ChannelShuffle(3), np_channel_shuffle(a[:1], 3))]
    for module, expected in pairs[1:-1]:
        np.testing.assert_allclose(npy(module(x)), npy(expected) if isinstance(expected, ember.Tensor) else expected,
                                   rtol=1e-12, err_msg=type(module).__name__)
    with pytest.raises(RuntimeError, match="glu"):
        nn.GLU(1)(x)  # 3 channels do not halve
    assert nn.GLU(2)(x).shape == (2, 3, 2)
    np.testing.assert_allclose(npy(nn.ChannelShuffle(3)(x[:1])), pairs[-1][1])
    with pytest.raises(ValueError, match="Softmax2d"):
        nn.Softmax2d()(x[0, 0])


def test_inplace_activations():
    x = ember.tensor([-1.0, 0.5, 2.0])
    assert F.selu(x, inplace=True) is x and abs(float(x[0]) - SELU_SCALE * SELU_ALPHA * math.expm1(-1)) < 1e-6
    y = ember.tensor([-1.0, 0.5, 2.0])
    F.threshold_(y, 1.0, 0.0)
    assert npy(y).tolist() == [0.0, 0.0, 2.0]


def test_rrelu_and_feature_alpha_dropout():
    ember.manual_seed(2)
    x = -ember.ones(20000, dtype=ember.float64)
    slopes = npy(F.rrelu(x, 0.1, 0.3, training=True)) * -1
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.005
    assert len(np.unique(slopes)) > 1000  # a slope per element
    m = nn.RReLU(0.1, 0.3)
    m.eval()
    np.testing.assert_allclose(npy(m(x)), -0.2)
    y = ember.randn(3000, 4, 5)
    out = npy(F.feature_alpha_dropout(y, 0.4, training=True))
    # Whole channels are dropped: every element of a dropped channel holds the same value.
    dropped = np.all(np.isclose(out, out[:, :, :1]), axis=2)
    assert abs(dropped.mean() - 0.4) < 0.03
    assert abs(out.mean()) < 0.03 and abs(out.std() - 1) < 0.03
    assert nn.FeatureAlphaDropout(0.4).eval()(y) is y
    with pytest.raises(RuntimeError, match="feature_alpha_dropout"):
        F.feature_alpha_dropout(ember.ones(3), 0.5, True)


def test_multilabel_margin_and_distance_triplet_modules():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((3, 5))
    np.testing.assert_allclose(npy(nn.MultiLabelMarginLoss()(ember.tensor(x), ember.tensor(MLM_TARGET))),
                               np_multilabel_margin(x, MLM_TARGET).mean(), rtol=1e-12)
    np.testing.assert_allclose(npy(F.multilabel_margin_loss(ember.tensor(x[0]), ember.tensor(MLM_TARGET[0]))),
                               np_multilabel_margin(x[:1], MLM_TARGET[:1])[0], rtol=1e-12)
    xt = ember.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: F.multilabel_margin_loss(t, ember.tensor(MLM_TARGET)), [xt])
    a, p, n = (ember.tensor(rng.standard_normal((4, 3))) for _ in range(3))
    np.testing.assert_allclose(npy(nn.TripletMarginWithDistanceLoss()(a, p, n)),
                               npy(F.triplet_margin_loss(a, p, n)), rtol=1e-12)
    with pytest.raises(RuntimeError, match="multilabel_margin_loss"):
        F.multilabel_margin_loss(ember.tensor(x), ember.tensor(MLM_TARGET + 5))
    with pytest.raises(RuntimeError, match="multilabel_margin_loss"):
        F.multilabel_margin_loss(ember.tensor(x), ember.tensor(MLM_TARGET[:, :2]))
    with pytest.raises(ValueError, match="margin"):
        nn.TripletMarginWithDistanceLoss(margin=0.0)


def test_activation_errors():
    with pytest.raises(RuntimeError, match="softshrink"):
        F.softshrink(ember.ones(2), -1.0)
    with pytest.raises(RuntimeError, match="glu"):
        F.glu(ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="channel_shuffle"):
        F.channel_shuffle(ember.ones(1, 4, 2), 3)
    with pytest.raises(RuntimeError, match="celu"):
        F.celu(ember.ones(2), 0.0)


def test_loss_modules_and_reductions():
    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((4, 3)) for _ in range(3))
    y = np.array([1.0, -1.0, 1.0, -1.0])
    A, B, C, Y = (ember.tensor(v) for v in (a, b, c, y))
    for reduction in ("none", "sum", "mean"):
        checks = [
            (nn.MarginRankingLoss(0.2, reduction=reduction)(A[:, 0], B[:, 0], Y),
             _red(np.maximum(-y * (a[:, 0] - b[:, 0]) + 0.2, 0), reduction)),
            (nn.CosineEmbeddingLoss(0.1, reduction=reduction)(A, B, Y), _red(np_cosine_embedding(a, b, y, 0.1),
                                                                          reduction)),
            (nn.TripletMarginLoss(0.7, p=1, swap=True, reduction=reduction)(A, B, C),
             _red(np_triplet(a, b, c, 0.7, 1, 1e-6, True), reduction)),
            (nn.PoissonNLLLoss(reduction=reduction)(A, ember.tensor(np.abs(b))),
             _red(np_poisson(a, np.abs(b), True, False), reduction)),
            (nn.GaussianNLLLoss(reduction=reduction)(A, B, ember.tensor(np.abs(c))),
             _red(np_gaussian(a, b, np.abs(c), False), reduction)),
            (nn.SoftMarginLoss(reduction=reduction)(A, ember.tensor(_sign(b))),
             _red(np.log1p(np.exp(-_sign(b) * a)), reduction)),
            (nn.MultiLabelSoftMarginLoss(reduction=reduction)(A, ember.tensor((b > 0) * 1.0)),
             _red(-((b > 0) * _logsig(a) + (b <= 0) * _logsig(-a)).mean(-1), reduction)),
            (nn.MultiMarginLoss(p=2, reduction=reduction)(A, ember.tensor([0, 2, 1, 1])),
             _red(np_multi_margin(a, [0, 2, 1, 1], 2, 1.0), reduction)),
            (nn.HingeEmbeddingLoss(reduction=reduction)(A, ember.tensor(_sign(b))),
             _red(np.where(_sign(b) == 1, a, np.maximum(1 - a, 0)), reduction)),
        ]
        for got, expected in checks:
            np.testing.assert_allclose(npy(got), expected, rtol=1e-10, err_msg=reduction)


def test_loss_errors():
    x = ember.ones(3, 4)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.soft_margin_loss(x, x, reduction="avg")
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        F.margin_ranking_loss(x[0], x[0], x[0], size_average=True)  # mapped to a reduction (test_loss.py)
    with pytest.raises(RuntimeError, match="margin_ranking_loss"):
        F.margin_ranking_loss(x, x[0], x[0])
    with pytest.raises(RuntimeError, match="triplet_margin_loss"):
        F.triplet_margin_loss(x, x, x[0])
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        F.multi_margin_loss(x, ember.tensor([0, 1, 2]), p=3)
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(RuntimeError, match="multi_margin_loss"):
        F.multi_margin_loss(x, ember.tensor([0, 1, 4]))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, x, ember.ones(2))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(x, x, -ember.ones(3, 4))
    with pytest.raises(RuntimeError, match="cosine_embedding_loss"):
        F.cosine_embedding_loss(x, x, ember.ones(3, 4))


def test_gaussian_nll_var_gradient_passes_the_clamp():
    var = ember.tensor([1e-9, 0.5], dtype=ember.float64, requires_grad=True)
    x, t = ember.tensor([0.0, 1.0], dtype=ember.float64), ember.tensor([0.0, 0.0], dtype=ember.float64)
    F.gaussian_nll_loss(x, t, var, eps=1e-3, reduction="sum").backward()
    # d/dvar of 0.5 log(v) + 0.5 d^2 / v at the clamped v = 1e-3 (d = 0): 0.5 / 1e-3.
    np.testing.assert_allclose(npy(var.grad), [0.5 / 1e-3, 0.5 / 0.5 - 0.5 / 0.25])


def test_instance_norm_modules_and_running_stats():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 2, 6))
    m = nn.InstanceNorm1d(2, affine=True, track_running_stats=True).double()
    out = m(ember.tensor(a))
    np.testing.assert_allclose(npy(out), np_instance_norm(a), rtol=1e-10, atol=1e-12)
    expected_mean = 0.9 * 0 + 0.1 * a.mean(2).mean(0)
    expected_var = 0.9 * 1 + 0.1 * a.var(2, ddof=1).mean(0)
    np.testing.assert_allclose(npy(m.running_mean), expected_mean, rtol=1e-10)
    np.testing.assert_allclose(npy(m.running_var), expected_var, rtol=1e-10)
    m.eval()
    ev = npy(m(ember.tensor(a)))
    np.testing.assert_allclose(ev, (a - expected_mean[None, :, None]) / np.sqrt(expected_var[None, :, None] + 1e-5),
                               rtol=1e-10)
    assert nn.InstanceNorm2d(2)(ember.tensor(a[:, :, None, :].repeat(2, 2)[0])).shape == (2, 2, 6)  # unbatched
    assert "running_mean" in m.state_dict() and "running_mean" not in nn.InstanceNorm1d(2).state_dict()
    a3 = rng.standard_normal((2, 2, 3, 2, 2))
    np.testing.assert_allclose(npy(nn.InstanceNorm3d(2)(ember.tensor(a3))), np_instance_norm(a3), rtol=1e-10,
                               atol=1e-12)
    with pytest.raises(ValueError, match="InstanceNorm1d"):
        nn.InstanceNorm1d(2)(ember.ones(2))
    with pytest.raises(ValueError, match="more than 1 spatial element"):
        F.instance_norm(ember.ones(2, 3, 1))
    with pytest.raises(ValueError, match="local_response_norm"):
        nn.LocalResponseNorm(2)(ember.ones(2, 3))


def test_fold_is_unfold_adjoint_and_module_roundtrip():
    rng = np.random.default_rng(6)
    x = ember.tensor(rng.standard_normal((2, 3, 5, 4)))
    un = nn.Unfold((2, 2), padding=1, stride=2)
    cols = un(x)
    # <unfold(x), c> == <x, fold(c)>: fold is unfold's transpose.
    c = ember.tensor(rng.standard_normal(tuple(cols.shape)))
    back = nn.Fold((5, 4), (2, 2), padding=1, stride=2)(c)
    np.testing.assert_allclose(float((cols * c).sum()), float((x * back).sum()), rtol=1e-10)
    # Non-overlapping blocks: fold(unfold(x)) == x.
    blocks = F.fold(F.unfold(x, 1), (5, 4), 1)
    np.testing.assert_allclose(npy(blocks), npy(x))
    assert F.unfold(x[0], 2).shape == (12, 12)  # unbatched
    with pytest.raises(NotImplementedError, match="Only 3D or 4D"):
        F.unfold(ember.ones(2, 3), 2)
    with pytest.raises(RuntimeError, match="sliding blocks"):
        F.fold(ember.ones(1, 4, 5), (3, 3), 2)
    with pytest.raises(RuntimeError, match="divisible"):
        F.fold(ember.ones(1, 5, 4), (3, 3), 2)


def test_embedding_bag_variants():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((10, 3))
    W = ember.tensor(w)
    idx2 = BAG_INPUT[:8].reshape(2, 4)
    for mode in ("sum", "mean", "max"):
        got = F.embedding_bag(ember.tensor(idx2), W, mode=mode)
        np.testing.assert_allclose(npy(got), np_embedding_bag(w, idx2.reshape(-1), np.array([0, 4]), mode),
                                   rtol=1e-12)
    psw = rng.standard_normal(len(BAG_INPUT))
    got = F.embedding_bag(ember.tensor(BAG_INPUT), W, ember.tensor(BAG_OFFSETS), mode="sum",
                          per_sample_weights=ember.tensor(psw))
    np.testing.assert_allclose(npy(got), np_embedding_bag(w, BAG_INPUT, BAG_OFFSETS, "sum", psw), rtol=1e-12)
    last = np.append(BAG_OFFSETS, len(BAG_INPUT))
    got = F.embedding_bag(ember.tensor(BAG_INPUT), W, ember.tensor(last), mode="mean", include_last_offset=True)
    np.testing.assert_allclose(npy(got), np_embedding_bag(w, BAG_INPUT, BAG_OFFSETS, "mean"), rtol=1e-12)
    bag = nn.EmbeddingBag.from_pretrained(W, mode="max")
    assert not bag.weight.requires_grad
    np.testing.assert_allclose(npy(bag(ember.tensor(BAG_INPUT), ember.tensor(BAG_OFFSETS))),
                               np_embedding_bag(w, BAG_INPUT, BAG_OFFSETS, "max"))
    m = nn.EmbeddingBag(10, 4, mode="sum", padding_idx=2)
    assert m(ember.tensor([[2, 2]])).abs().sum().item() == 0
    psw_t = ember.tensor(psw, requires_grad=True)
    assert gradcheck(lambda p: F.embedding_bag(ember.tensor(BAG_INPUT), W, ember.tensor(BAG_OFFSETS), mode="sum",
                                               per_sample_weights=p), [psw_t])
    with pytest.raises(NotImplementedError, match="per_sample_weights"):
        F.embedding_bag(ember.tensor(BAG_INPUT), W, ember.tensor(BAG_OFFSETS), per_sample_weights=ember.tensor(psw))
    with pytest.raises(ValueError, match="offsets has to be None"):
        F.embedding_bag(ember.tensor(idx2), W, ember.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D"):
        F.embedding_bag(ember.tensor(BAG_INPUT), W)
    with pytest.raises(RuntimeError, match="embedding_bag"):
        F.embedding_bag(ember.tensor([[11]]), W)
    with pytest.raises(RuntimeError, match="embedding_bag"):
        F.embedding_bag(ember.tensor([1, 2]), W, ember.tensor([1]))
    with pytest.raises(RuntimeError, match="embedding_bag"):
        F.embedding_bag(ember.tensor([1.0, 2.0]), W, ember.tensor([0]))
    with pytest.raises(ValueError, match="mode"):
        F.embedding_bag(ember.tensor(idx2), W, mode="median")


def test_pooling_and_conv_transpose_modules():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((2, 3, 8))
    x = ember.tensor(a)
    np.testing.assert_allclose(npy(nn.MaxPool1d(2)(x)), a.reshape(2, 3, 4, 2).max(-1))
    np.testing.assert_allclose(npy(nn.AvgPool1d(4)(x)), a.reshape(2, 3, 2, 4).mean(-1))
    np.testing.assert_allclose(npy(nn.AdaptiveAvgPool1d(2)(x)), a.reshape(2, 3, 2, 4).mean(-1))
    np.testing.assert_allclose(npy(nn.AdaptiveMaxPool1d(4)(x)), a.reshape(2, 3, 4, 2).max(-1))
    values, indices = nn.AdaptiveMaxPool1d(4, return_indices=True)(x)
    assert indices.dtype == ember.int64 and values.shape == (2, 3, 4)
    a2 = rng.standard_normal((1, 2, 4, 6))
    np.testing.assert_allclose(npy(nn.AdaptiveMaxPool2d((2, 3))(ember.tensor(a2))),
                               a2.reshape(1, 2, 2, 2, 3, 2).max(axis=(3, 5)))
    ct = nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1, output_padding=1).double()
    out = ct(x)
    assert out.shape == (2, 2, 16)
    # Transposed conv = the adjoint of conv1d with the same weight.
    g = ember.tensor(rng.standard_normal((2, 2, 16)))
    lhs = float(((out - ct.bias.reshape(1, 2, 1)) * g).sum())
    rhs = float((x * F.conv1d(g, ct.weight, None, 2, 1)[..., :8]).sum())
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10)


# ---- torch parity ----------------------------------------------------------------------------------------

@needs_torch
def test_torch_parity_functionals():
    import torch.nn.functional as TF
    rng = np.random.default_rng(9)
    a, b, c = (rng.standard_normal((4, 6)) for _ in range(3))
    y = np.array([1.0, -1.0, -1.0, 1.0])
    cls = np.array([0, 5, 2, 3])
    E, T = (lambda *v: [ember.tensor(x) for x in v]), (lambda *v: [torch.tensor(x) for x in v])
    calls = [
        ("glu", lambda f, m, x, z: f.glu(x, 1), (a, a)),
        ("selu", lambda f, m, x, z: f.selu(x), (a, a)),
        ("celu", lambda f, m, x, z: f.celu(x, 0.3), (a, a)),
        ("softmin", lambda f, m, x, z: f.softmin(x, 0), (a, a)),
        ("hardshrink", lambda f, m, x, z: f.hardshrink(x, 0.4), (a, a)),
        ("softshrink", lambda f, m, x, z: f.softshrink(x, 0.4), (a, a)),
        ("tanhshrink", lambda f, m, x, z: f.tanhshrink(x), (a, a)),
        ("threshold", lambda f, m, x, z: f.threshold(x, 0.2, 7.0), (a, a)),
        ("margin_ranking", lambda f, m, x, z: f.margin_ranking_loss(x[:, 0], z[:, 0], m(y), 0.1), (a, b)),
        ("cosine_embedding", lambda f, m, x, z: f.cosine_embedding_loss(x, z, m(y), 0.3), (a, b)),
        ("triplet", lambda f, m, x, z: f.triplet_margin_loss(x, z, m(c), 2.0, p=1.5, swap=True), (a, b)),
        ("poisson", lambda f, m, x, z: f.poisson_nll_loss(x, m(np.abs(c) * 3), full=True, reduction="sum"), (a, b)),
        ("gaussian", lambda f, m, x, z: f.gaussian_nll_loss(x, z, m(np.abs(c[:, :1])), full=True), (a, b)),
        ("soft_margin", lambda f, m, x, z: f.soft_margin_loss(x, m(_sign(c))), (a, b)),
        ("multilabel", lambda f, m, x, z: f.multilabel_soft_margin_loss(x, m((c > 0) * 1.0), m(np.abs(b[0]))), (a, b)),
        ("multi_margin", lambda f, m, x, z: f.multi_margin_loss(x, m(cls), p=2, margin=0.4, weight=m(np.abs(b[0]))),
         (a, b)),
        ("hinge", lambda f, m, x, z: f.hinge_embedding_loss(x, m(_sign(c)), 0.6, reduction="none"), (a, b)),
        ("instance_norm", lambda f, m, x, z: f.instance_norm(x.reshape(2, 2, 6), weight=m(b[0, :2]),
                                                             bias=m(c[0, :2])), (a, b)),
        ("lrn", lambda f, m, x, z: f.local_response_norm(x.reshape(1, 4, 6), 3, 0.1, 0.5, 2.0), (a, b)),
        ("unfold", lambda f, m, x, z: f.unfold(x.reshape(1, 1, 4, 6), (3, 2), 1, (1, 0), (1, 2)), (a, b)),
        ("fold", lambda f, m, x, z: f.fold(x.reshape(1, 4, 6), (3, 4), 2, stride=1), (a, b)),
        ("embedding_bag", lambda f, m, x, z: f.embedding_bag(m(np.array([1, 3, 0, 2, 3])), x,
                                                             m(np.array([0, 2, 2])), mode="max"), (a, b)),
        ("channel_shuffle", lambda f, m, x, z: f.channel_shuffle(x.reshape(1, 4, 6), 2), (a, b)),
        ("rrelu_eval", lambda f, m, x, z: f.rrelu(x, 0.2, 0.4), (a, b)),
        ("multilabel_margin", lambda f, m, x, z: f.multilabel_margin_loss(x[:3, :5], m(MLM_TARGET)), (a, b)),
        ("triplet_distance", lambda f, m, x, z: f.triplet_margin_with_distance_loss(
            x, z, m(c), distance_function=lambda u, v: ((u - v) ** 2).sum(-1), swap=True), (a, b)),
    ]
    for name, call, (x, z) in calls:
        ex, ez = (ember.tensor(x, requires_grad=True), ember.tensor(z, requires_grad=True))
        tx, tz = (torch.tensor(x, requires_grad=True), torch.tensor(z, requires_grad=True))
        got = call(F, ember.tensor, ex, ez)
        ref = call(TF, torch.tensor, tx, tz)
        np.testing.assert_allclose(npy(got), ref.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
        got.sum().backward()
        ref.sum().backward()
        for e_in, t_in in ((ex, tx), (ez, tz)):
            if t_in.grad is not None:
                # rtol 1e-6: torch's celu backward rounds 1 / alpha to float32.
                np.testing.assert_allclose(npy(e_in.grad), t_in.grad.numpy(), rtol=1e-6, atol=1e-12, err_msg=name)


@needs_torch
def test_torch_raises_the_same_exception_types():
    import torch.nn.functional as TF
    bad = [
        lambda f, m: f.glu(m(np.ones((2, 3))), 1),
        lambda f, m: f.softshrink(m(np.ones(2)), -0.5),
        lambda f, m: f.multi_margin_loss(m(np.ones((2, 3))), m(np.array([0, 1])), p=3),
        lambda f, m: f.gaussian_nll_loss(m(np.ones((2, 3))), m(np.ones((2, 3))), m(np.ones(3))),
        lambda f, m: f.unfold(m(np.ones((1, 1, 2, 3, 3))), 2),
        lambda f, m: f.fold(m(np.ones((1, 4, 5))), (3, 3), 2),
        lambda f, m: f.embedding_bag(m(np.array([[1]])), m(np.ones((3, 2))), m(np.array([0]))),
        lambda f, m: f.local_response_norm(m(np.ones((2, 3))), 2),
        lambda f, m: f.soft_margin_loss(m(np.ones(2)), m(np.ones(2)), reduction="avg"),
        lambda f, m: f.embedding_bag(m(np.array([1.0, 2.0])), m(np.ones((3, 2))), m(np.array([0]))),
        lambda f, m: f.embedding_bag(m(np.array([1, 2])), m(np.ones((3, 2))), m(np.array([1]))),
        lambda f, m: f.embedding_bag(m(np.array([[4]])), m(np.ones((3, 2)))),
        lambda f, m: f.multi_margin_loss(m(np.ones((2, 3))), m(np.array([0, 5]))),
        lambda f, m: f.multilabel_margin_loss(m(np.ones((2, 3))), m(np.ones((2, 3)))),
        lambda f, m: f.instance_norm(m(np.ones((2, 3, 1)))),
        lambda f, m: f.channel_shuffle(m(np.ones((1, 4, 2))), 3),
    ]
    for i, call in enumerate(bad):
        with pytest.raises(Exception) as ref:
            call(TF, torch.tensor)
        with pytest.raises(Exception) as got:
            call(F, ember.tensor)
        assert isinstance(got.value, type(ref.value)) or type(ref.value).__name__ == type(got.value).__name__, \
            f"case {i}: ember raised {type(got.value).__name__}, torch {type(ref.value).__name__}"


def test_review_nan_passes_through_the_shrink_and_threshold_activations():
    x = ember.tensor([float("nan"), 0.2, 1.0])
    for out, rest in ((F.hardshrink(x), [0.0, 1.0]), (F.softshrink(x), [0.0, 0.5]), (F.threshold(x, 0.5, 9.0), [9.0, 1.0])):
        values = out.tolist()
        assert np.isnan(values[0]) and values[1:] == rest
    y = ember.tensor([0.0, -1.0], requires_grad=True)
    F.rrelu(y, 0.25, 0.25, training=False).sum().backward()
    assert y.grad.tolist() == [0.25, 0.25]  # the slope at 0, as torch
