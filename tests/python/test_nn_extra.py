"""F.interpolate / nn.Upsample, pixel_shuffle / pixel_unshuffle, prelu / nn.PReLU, huber_loss /
nn.HuberLoss, pairwise_distance / nn.PairwiseDistance, nn.CosineSimilarity, nn.Dropout1d/2d/3d:
against numpy references and hand-worked values (always), torch (when importable), gradcheck."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck
from harness import OpCase, table_tests, torch

RNG = np.random.default_rng(5)
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
_F = (np.float32, np.float64)


def npy(t):
    return t.detach().numpy()


# ---- numpy references -------------------------------------------------------------------------------

def np_nearest(a, out_size, exact=False, scales=None):
    """Per output position, the source floor(dst * in / out) (torch's float32 arithmetic)."""
    for d, n_out in enumerate(out_size):
        axis = 2 + d
        n_in = a.shape[axis]
        s = np.float32(1 / scales[d]) if scales else np.float32(n_in) / np.float32(n_out)
        src = [min(int(math.floor(np.float32(i + (0.5 if exact else 0.0)) * s)), n_in - 1) for i in range(n_out)]
        a = np.take(a, src, axis=axis)
    return a


def np_linear_point(n_in, n_out, i, align_corners, scale=None):
    if align_corners:
        src = i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        s = 1 / scale if scale else n_in / n_out
        src = max((i + 0.5) * s - 0.5, 0.0)
    lo = min(int(src), n_in - 1)
    hi = min(lo + 1, n_in - 1)
    return lo, hi, src - lo


def np_bilinear(a, out_size, align_corners, scales=(None, None)):
    """Each output point as the weighted sum of its four source corners."""
    n, c, h, w = a.shape
    oh, ow = out_size
    out = np.zeros((n, c, oh, ow), dtype=np.float64)
    for y in range(oh):
        y0, y1, ly = np_linear_point(h, oh, y, align_corners, scales[0])
        for x in range(ow):
            x0, x1, lx = np_linear_point(w, ow, x, align_corners, scales[1])
            out[:, :, y, x] = ((1 - ly) * ((1 - lx) * a[:, :, y0, x0] + lx * a[:, :, y0, x1])
                               + ly * ((1 - lx) * a[:, :, y1, x0] + lx * a[:, :, y1, x1]))
    return out.astype(a.dtype)


def np_linear(a, n_out, align_corners):
    return np_bilinear(a[:, :, None, :], (1, n_out), align_corners)[:, :, 0, :]


def np_trilinear(a, out_size, align_corners):
    n, c, d, h, w = a.shape
    od = out_size[0]
    planes = np.stack([np_bilinear(a[:, :, k], out_size[1:], align_corners).astype(np.float64) for k in range(d)],
                      2)
    out = np.zeros((n, c, od) + tuple(out_size[1:]))
    for z in range(od):
        z0, z1, lz = np_linear_point(d, od, z, align_corners)
        out[:, :, z] = (1 - lz) * planes[:, :, z0] + lz * planes[:, :, z1]
    return out.astype(a.dtype)


def np_area(a, out_size):
    n_in = a.shape[2:]
    out = np.zeros(a.shape[:2] + tuple(out_size), dtype=np.float64)
    for idx in np.ndindex(*out_size):
        sl = tuple(slice(i * n // o, -(-(i + 1) * n // o)) for i, n, o in zip(idx, n_in, out_size))
        out[(...,) + idx] = a[(...,) + sl].mean(axis=tuple(range(2, a.ndim)))
    return out.astype(a.dtype)


def np_pixel_shuffle(a, r):
    *lead, c, h, w = a.shape
    out = np.zeros(tuple(lead) + (c // (r * r), h * r, w * r), dtype=a.dtype)
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[..., ch, i::r, j::r] = a[..., ch * r * r + i * r + j, :, :]
    return out


def np_pixel_unshuffle(a, r):
    *lead, c, h, w = a.shape
    out = np.zeros(tuple(lead) + (c * r * r, h // r, w // r), dtype=a.dtype)
    for ch in range(c):
        for i in range(r):
            for j in range(r):
                out[..., ch * r * r + i * r + j, :, :] = a[..., ch, i::r, j::r]
    return out


def np_huber(a, b, delta, reduction="mean"):
    d = np.abs(a - b)
    loss = np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def np_prelu(a, w):
    w = w.reshape((-1,) + (1,) * (a.ndim - 2)) if a.ndim >= 2 else w
    return np.where(a > 0, a, a * w)


def np_pdist(a, b, p, eps=1e-6, keepdim=False):
    d = np.abs(a - b + eps)
    if p == math.inf:
        r = d.max(-1, keepdims=keepdim)
    else:
        r = (d ** p).sum(-1, keepdims=keepdim) ** (1 / p)
    return r.astype(np.result_type(a, b))


CASES = [
    OpCase("interpolate_nearest_size", lambda x: F.interpolate(x, size=(5, 3)), lambda a: np_nearest(a, (5, 3)),
           [[(2, 2, 3, 4)], [(1, 1, 7, 2)]], dtypes=_F),
    OpCase("interpolate_nearest_scale", lambda x: F.interpolate(x, scale_factor=1.5),
           lambda a: np_nearest(a, [int(n * 1.5) for n in a.shape[2:]], scales=[1.5] * (a.ndim - 2)),
           [[(2, 3, 4)], [(1, 2, 3, 5)], [(1, 1, 2, 3, 2)]], dtypes=_F),
    OpCase("interpolate_nearest_exact", lambda x: F.interpolate(x, size=7, mode="nearest-exact"),
           lambda a: np_nearest(a, (7,), exact=True), [[(2, 2, 5)]], dtypes=_F),
    OpCase("interpolate_linear", lambda x: F.interpolate(x, size=7, mode="linear"), lambda a: np_linear(a, 7, False),
           [[(2, 3, 4)], [(1, 2, 9)]], dtypes=_F),
    OpCase("interpolate_linear_align", lambda x: F.interpolate(x, size=6, mode="linear", align_corners=True),
           lambda a: np_linear(a, 6, True), [[(2, 3, 4)]], dtypes=_F),
    OpCase("interpolate_bilinear", lambda x: F.interpolate(x, size=(5, 3), mode="bilinear"),
           lambda a: np_bilinear(a, (5, 3), False), [[(2, 2, 3, 4)]], dtypes=_F),
    OpCase("interpolate_bilinear_scale", lambda x: F.interpolate(x, scale_factor=(1.6, 0.75), mode="bilinear"),
           lambda a: np_bilinear(a, (int(a.shape[2] * 1.6), int(a.shape[3] * 0.75)), False, (1.6, 0.75)),
           [[(1, 2, 3, 4)]], dtypes=_F),
    OpCase("interpolate_bilinear_align", lambda x: F.interpolate(x, size=(4, 6), mode="bilinear", align_corners=True),
           lambda a: np_bilinear(a, (4, 6), True), [[(2, 2, 3, 4)], [(1, 1, 1, 3)]], dtypes=_F),
    OpCase("interpolate_trilinear", lambda x: F.interpolate(x, size=(3, 2, 4), mode="trilinear"),
           lambda a: np_trilinear(a, (3, 2, 4), False), [[(1, 2, 2, 3, 2)]], dtypes=_F),
    OpCase("interpolate_area", lambda x: F.interpolate(x, size=(2, 3), mode="area"), lambda a: np_area(a, (2, 3)),
           [[(2, 2, 5, 6)]], dtypes=_F),
    OpCase("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), lambda a: np_pixel_shuffle(a, 2),
           [[(2, 8, 3, 2)], [(4, 2, 3)], [(2, 1, 8, 1, 2)]], dtypes=_F),
    OpCase("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 3), lambda a: np_pixel_unshuffle(a, 3),
           [[(2, 2, 3, 6)], [(1, 6, 3)]], dtypes=_F),
    OpCase("prelu_channels", lambda x, w: F.prelu(x, w), np_prelu, [[(2, 3, 4), (3,)], [(2, 3), (3,)]], dtypes=_F),
    OpCase("prelu_shared", lambda x, w: F.prelu(x, w), lambda a, w: np.where(a > 0, a, a * w),
           [[(2, 3, 4), (1,)], [(5,), (1,)]], dtypes=_F),
    OpCase("huber_loss", lambda x, y: F.huber_loss(x, y), lambda a, b: np_huber(a, b, 1.0),
           [[(3, 4), (3, 4)], [(5,), (5,)]], dtypes=_F, domain=(-3, 3)),
    OpCase("huber_loss_delta_none", lambda x, y: F.huber_loss(x, y, reduction="none", delta=0.5),
           lambda a, b: np_huber(a, b, 0.5, "none"), [[(3, 4), (3, 4)], [(2, 3), (3,)]], dtypes=_F),
    OpCase("huber_loss_sum", lambda x, y: F.huber_loss(x, y, reduction="sum", delta=2.0),
           lambda a, b: np_huber(a, b, 2.0, "sum"), [[(3, 4), (3, 4)]], dtypes=_F, rtol=1e-5),
    OpCase("pairwise_distance", lambda x, y: F.pairwise_distance(x, y), lambda a, b: np_pdist(a, b, 2),
           [[(3, 4), (3, 4)], [(4,), (4,)], [(2, 3, 4), (4,)]], dtypes=_F),
    OpCase("pairwise_distance_p1_keepdim", lambda x, y: F.pairwise_distance(x, y, 1.0, keepdim=True),
           lambda a, b: np_pdist(a, b, 1, keepdim=True), [[(3, 4), (3, 4)]], dtypes=_F),
    OpCase("pairwise_distance_p3", lambda x, y: F.pairwise_distance(x, y, 3.0, eps=1e-3),
           lambda a, b: np_pdist(a, b, 3, 1e-3), [[(3, 4), (3, 4)]], dtypes=_F, rtol=1e-4),
]
test_table_forward, test_table_gradcheck = table_tests(CASES)


# ---- hand-worked values -------------------------------------------------------------------------------

def test_interpolate_known_values():
    x = ember.tensor([[[1.0, 2.0]]])
    np.testing.assert_allclose(npy(F.interpolate(x, scale_factor=2, mode="linear")), [[[1, 1.25, 1.75, 2]]])
    np.testing.assert_allclose(npy(F.interpolate(x, size=3, mode="linear", align_corners=True)), [[[1, 1.5, 2]]])
    np.testing.assert_allclose(npy(F.interpolate(x, scale_factor=2)), [[[1, 1, 2, 2]]])
    np.testing.assert_allclose(npy(F.interpolate(ember.tensor([[[1.0, 2.0, 3.0]]]), size=2)), [[[1, 2]]])
    np.testing.assert_allclose(npy(F.interpolate(ember.tensor([[[1.0, 2.0, 3.0]]]), size=2, mode="nearest-exact")),
                               [[[1, 3]]])
    img = ember.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    np.testing.assert_allclose(npy(F.interpolate(img, size=3, mode="bilinear", align_corners=True)),
                               [[[[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]]])


def test_interpolate_errors():
    x = ember.zeros(1, 2, 3, 4)
    for mode in ("nearest", "bilinear", "bicubic"):
        with pytest.raises(RuntimeError, match=r"interpolate: input \[0, 4\] and output \[2, 2\] sizes should be "
                                               r"greater than 0"):
            F.interpolate(ember.zeros(1, 2, 0, 4), size=(2, 2), mode=mode)
    assert F.interpolate(ember.zeros(0, 2, 3, 4), size=(2, 2)).shape == (0, 2, 2, 2)  # an empty batch is fine
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="bilinear mode needs 4D"):
        F.interpolate(ember.zeros(1, 2, 3), size=2, mode="bilinear")
    with pytest.raises(NotImplementedError, match="got 2D"):
        F.interpolate(ember.zeros(2, 3), size=2)
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=(2, 3, 4))
    with pytest.raises(NotImplementedError, match="bicubic mode needs 4D"):
        F.interpolate(ember.zeros(1, 2, 3, 4, 5), size=2, mode="bicubic")


def test_upsample_modules():
    x = ember.tensor(RNG.standard_normal((1, 2, 3, 4)))
    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    np.testing.assert_allclose(npy(up(x)), np_bilinear(npy(x), (6, 8), False), rtol=1e-12)
    np.testing.assert_allclose(npy(nn.UpsamplingBilinear2d(size=(5, 5))(x)), np_bilinear(npy(x), (5, 5), True),
                               rtol=1e-12)
    np.testing.assert_array_equal(npy(nn.UpsamplingNearest2d(scale_factor=3)(x)),
                                  np.repeat(np.repeat(npy(x), 3, 2), 3, 3))
    assert "scale_factor=2.0" in repr(up) and "bilinear" in repr(up)


def test_pixel_shuffle_roundtrip_and_errors():
    x = ember.tensor(RNG.standard_normal((2, 3, 4, 6)))
    np.testing.assert_array_equal(npy(nn.PixelShuffle(2)(nn.PixelUnshuffle(2)(x))), npy(x))
    with pytest.raises(RuntimeError, match="divisible by the square"):
        F.pixel_shuffle(ember.zeros(1, 5, 2, 2), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        F.pixel_shuffle(ember.zeros(4, 2), 2)
    with pytest.raises(RuntimeError, match="width to be divisible"):
        F.pixel_unshuffle(ember.zeros(1, 1, 4, 3), 2)


def test_prelu_module_learns_its_slope():
    m = nn.PReLU(3)
    assert tuple(m.weight.shape) == (3,) and np.all(npy(m.weight) == np.float32(0.25))
    x = ember.tensor(RNG.standard_normal((4, 3, 2)).astype(np.float32))
    m(x).sum().backward()
    expected = np.minimum(npy(x), 0).sum(axis=(0, 2))  # d/da of a * min(x, 0)
    np.testing.assert_allclose(npy(m.weight.grad), expected, rtol=1e-5)
    assert tuple(nn.PReLU(init=0.1).weight.shape) == (1,)
    with pytest.raises(RuntimeError, match="prelu"):
        F.prelu(x, ember.ones(4))


def test_losses_and_distances_modules():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)) * 2
    ta, tb = ember.tensor(a), ember.tensor(b)
    np.testing.assert_allclose(float(nn.HuberLoss(delta=0.7)(ta, tb)), np_huber(a, b, 0.7), rtol=1e-12)
    np.testing.assert_allclose(npy(nn.HuberLoss(reduction="none")(ta, tb)), np_huber(a, b, 1.0, "none"), rtol=1e-12)
    np.testing.assert_allclose(npy(nn.PairwiseDistance(p=1.0)(ta, tb)), np_pdist(a, b, 1), rtol=1e-12)
    np.testing.assert_allclose(npy(nn.PairwiseDistance(p=math.inf, keepdim=True)(ta, tb)),
                               np_pdist(a, b, math.inf, keepdim=True), rtol=1e-12)
    cos = (a * b).sum(0) / (np.linalg.norm(a, axis=0) * np.linalg.norm(b, axis=0))
    np.testing.assert_allclose(npy(nn.CosineSimilarity(dim=0)(ta, tb)), cos, rtol=1e-12)
    with pytest.raises(RuntimeError, match="delta"):
        F.huber_loss(ta, tb, delta=0.0)
    with pytest.raises(ValueError, match="reduction"):
        F.huber_loss(ta, tb, reduction="avg")


@pytest.mark.parametrize("cls,shape,channel_dims", [("Dropout1d", (4, 6, 5), 2), ("Dropout2d", (4, 6, 3, 3), 2),
                                                    ("Dropout3d", (2, 6, 2, 2, 2), 2), ("Dropout1d", (8, 5), 1),
                                                    ("Dropout3d", (8, 2, 1, 2), 1)])
def test_channel_dropout_modules(cls, shape, channel_dims):
    ember.manual_seed(3)
    m = getattr(nn, cls)(p=0.5)
    x = ember.ones(*shape)
    y = npy(m(x))
    per_channel = y.reshape(shape[:channel_dims] + (-1,))
    # each channel is all zeros or all 1 / (1 - p)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))
    assert 0 < (per_channel == 0).all(-1).sum() < per_channel.shape[0] * (per_channel.shape[1] if channel_dims > 1
                                                                          else 1)
    m.eval()
    np.testing.assert_array_equal(npy(m(x)), npy(x))


def test_dropout1d_rejects_other_ranks():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(ember.ones(2, 3, 4, 5))


# ---- torch parity -------------------------------------------------------------------------------------

@needs_torch
def test_interpolate_matches_torch():
    checked = 0
    for shape in [(2, 3, 5), (2, 2, 4, 5), (1, 2, 3, 4, 3)]:
        x = RNG.standard_normal(shape)
        spatial = len(shape) - 2
        modes = ["nearest", "nearest-exact", {1: "linear", 2: "bilinear", 3: "trilinear"}[spatial]]
        modes += ["area"]
        for mode in modes:
            for kw in [dict(size=7), dict(size=3), dict(scale_factor=2), dict(scale_factor=1.7),
                       dict(scale_factor=0.6), dict(scale_factor=2.5, recompute_scale_factor=True), dict(size=1)]:
                for ac in ([None] if mode in ("nearest", "nearest-exact", "area") else [False, True]):
                    tx = torch.tensor(x, requires_grad=True)
                    ex = ember.tensor(x).requires_grad_(True)
                    t = torch.nn.functional.interpolate(tx, mode=mode, align_corners=ac, **kw)
                    e = F.interpolate(ex, mode=mode, align_corners=ac, **kw)
                    msg = f"{shape} {mode} {kw} align_corners={ac}"
                    assert tuple(e.shape) == tuple(t.shape), msg
                    np.testing.assert_allclose(npy(e), t.detach().numpy(), rtol=1e-12, atol=1e-12, err_msg=msg)
                    w = RNG.standard_normal(tuple(t.shape))
                    (t * torch.tensor(w)).sum().backward()
                    (e * ember.tensor(w)).sum().backward()
                    np.testing.assert_allclose(npy(ex.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12, err_msg=msg)
                    checked += 1
    assert checked > 60


@needs_torch
def test_functionals_match_torch():
    tf = torch.nn.functional
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    for p in (2.0, 1.0, 3.0, math.inf):
        for keepdim in (False, True):
            np.testing.assert_allclose(npy(F.pairwise_distance(ember.tensor(a), ember.tensor(b), p, keepdim=keepdim)),
                                       tf.pairwise_distance(torch.tensor(a), torch.tensor(b), p,
                                                            keepdim=keepdim).numpy(), rtol=1e-12)
    for reduction in ("mean", "sum", "none"):
        for delta in (1.0, 0.3):
            np.testing.assert_allclose(npy(F.huber_loss(ember.tensor(a), ember.tensor(b), reduction, delta)),
                                       tf.huber_loss(torch.tensor(a), torch.tensor(b), reduction, delta).numpy(),
                                       rtol=1e-12)
    x = RNG.standard_normal((2, 3, 4, 2))
    for w in (RNG.standard_normal(1), RNG.standard_normal(3)):
        np.testing.assert_allclose(npy(F.prelu(ember.tensor(x), ember.tensor(w))),
                                   tf.prelu(torch.tensor(x), torch.tensor(w)).numpy(), rtol=1e-12)
    x = RNG.standard_normal((2, 3, 8, 4, 6))
    np.testing.assert_array_equal(npy(F.pixel_shuffle(ember.tensor(x[:, 0]), 2)),
                                  tf.pixel_shuffle(torch.tensor(x[:, 0]), 2).numpy())
    np.testing.assert_array_equal(npy(F.pixel_unshuffle(ember.tensor(x), 2)),
                                  tf.pixel_unshuffle(torch.tensor(x), 2).numpy())
    assert [n for n, _ in nn.PReLU(3).named_parameters()] == [n for n, _ in torch.nn.PReLU(3).named_parameters()]


# ---- gradients beyond the table -----------------------------------------------------------------------

def test_gradcheck_bilinear_align_corners_downscale():
    x = ember.tensor(RNG.standard_normal((1, 2, 5, 4))).requires_grad_(True)
    assert gradcheck(lambda t: F.interpolate(t, size=(3, 3), mode="bilinear", align_corners=True), [x])
    assert gradcheck(lambda t: F.interpolate(t, scale_factor=0.5, mode="nearest"), [x])


def test_review_integer_bilinear_rounds_like_float():
    u = np.random.default_rng(0).integers(0, 256, (1, 2, 4, 5)).astype(np.uint8)
    got = F.interpolate(ember.tensor(u), scale_factor=2, mode="bilinear").numpy()
    want = F.interpolate(ember.tensor(u.astype(np.float32)), scale_factor=2, mode="bilinear").numpy()
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, np.floor(want + 0.5).astype(np.uint8))
    if torch is not None:  # torch's uint8 kernel uses fixed-point weights: within one
        theirs = torch.nn.functional.interpolate(torch.tensor(u), scale_factor=2, mode="bilinear").numpy()
        assert np.abs(got.astype(int) - theirs.astype(int)).max() <= 1


def test_cxx_feature_dropout_reads_unbatched_channels_on_dim_0():
    ember.manual_seed(3)
    for fn, shape in ((ember._C._nn.dropout1d, (8, 6)), (ember._C._nn.dropout3d, (8, 2, 2, 3))):
        out = fn(ember.ones(*shape), 0.5, True, False).reshape(shape[0], -1).numpy()
        for row in out:  # a whole channel is kept (scaled by 2) or dropped
            assert (row == row[0]).all() and row[0] in (0.0, 2.0)
