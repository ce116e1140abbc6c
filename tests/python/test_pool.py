"""The pool family: max/avg pooling (1-D, 2-D, adaptive) against a direct-loop
numpy reference (stride, padding, dilation, ceil_mode, count_include_pad,
divisor_override, unbatched), indices, gradcheck in float64 for every op,
double backward, and PyTorch's errors."""
import math

import numpy as np
import pytest

import ember
from ember._C import _nn as F
from harness import OpCase, assert_close, make, random_array, table_tests, to_numpy

FLOATS = (np.float32, np.float64)


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def out_size(n, k, s, p, d, ceil_mode):
    num = n + 2 * p - d * (k - 1) - 1
    o = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def np_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, mode="max",
              count_include_pad=True, divisor_override=None, return_indices=False):
    """Direct loops over output cells with PyTorch's window and divisor rules."""
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    (kh, kw), (ph, pw), (dh, dw) = pair(kernel_size), pair(padding), pair(dilation)
    sh, sw = pair(stride) if stride is not None else (kh, kw)
    N, C, H, W = x.shape
    OH, OW = out_size(H, kh, sh, ph, dh, ceil_mode), out_size(W, kw, sw, pw, dw, ceil_mode)
    out = np.zeros((N, C, OH, OW), dtype=np.float64)
    idx = np.zeros((N, C, OH, OW), dtype=np.int64)
    for oh in range(OH):
        for ow in range(OW):
            if mode == "max":
                best = np.full((N, C), -np.inf)
                for i in range(kh):
                    for j in range(kw):
                        h, w = oh * sh - ph + i * dh, ow * sw - pw + j * dw
                        if 0 <= h < H and 0 <= w < W:
                            v = x[:, :, h, w]
                            take = v > best
                            best = np.where(take, v, best)
                            idx[:, :, oh, ow] = np.where(take, h * W + w, idx[:, :, oh, ow])
                out[:, :, oh, ow] = best
            else:
                h0, w0 = oh * sh - ph, ow * sw - pw
                h1, w1 = min(h0 + kh, H + ph), min(w0 + kw, W + pw)
                padded = (h1 - h0) * (w1 - w0)
                h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, H), min(w1, W)
                div = divisor_override or (padded if count_include_pad else (h1 - h0) * (w1 - w0))
                out[:, :, oh, ow] = x[:, :, h0:h1, w0:w1].sum(axis=(2, 3)) / div
    out = out.astype(x.dtype)
    if unbatched:
        out, idx = out[0], idx[0]
    return (out, idx) if return_indices else out


def np_adaptive2d(x, output_size, mode="avg"):
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    OH, OW = pair(output_size)
    H, W = x.shape[2:]
    out = np.zeros(x.shape[:2] + (OH, OW), dtype=np.float64)
    for oh in range(OH):
        h0, h1 = (oh * H) // OH, -(-((oh + 1) * H) // OH)
        for ow in range(OW):
            w0, w1 = (ow * W) // OW, -(-((ow + 1) * W) // OW)
            win = x[:, :, h0:h1, w0:w1]
            out[:, :, oh, ow] = win.max(axis=(2, 3)) if mode == "max" else win.mean(axis=(2, 3))
    out = out.astype(x.dtype)
    return out[0] if unbatched else out


def np_pool1d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, **kw):
    s = (1, stride) if stride is not None else None
    return np_pool2d(x[..., None, :], (1, kernel_size), s, (0, padding), (1, dilation), ceil_mode, **kw)[..., 0, :]


def case(name, shape, ember_op, np_op, **kw):
    np_kw = {k: v for k, v in kw.items() if k != "np"}
    np_kw.update(kw.get("np", {}))
    ember_kw = {k: v for k, v in kw.items() if k != "np"}
    return OpCase(name, lambda x: ember_op(x, **ember_kw), lambda a: np_op(a, **np_kw), [[shape]], dtypes=FLOATS,
                  rtol=1e-5, atol=1e-5)


MAX2D = [
    ("k2", (2, 3, 6, 6), dict(kernel_size=2)),
    ("k3_s2_p1", (1, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
    ("rect", (1, 2, 5, 7), dict(kernel_size=(2, 3), stride=(1, 2))),
    ("dilation", (1, 2, 8, 8), dict(kernel_size=3, dilation=2, padding=2)),
    ("ceil", (1, 2, 7, 6), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ("ceil_pad", (1, 1, 6, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("unbatched", (2, 5, 5), dict(kernel_size=2, stride=1)),
]
AVG2D = [
    ("k2", (2, 3, 6, 6), dict(kernel_size=2)),
    ("k3_s2_p1", (1, 2, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
    ("exclude_pad", (1, 2, 5, 5), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ("ceil", (1, 2, 7, 6), dict(kernel_size=2, stride=2, ceil_mode=True)),
    ("ceil_exclude_pad", (1, 1, 6, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                            count_include_pad=False)),
    ("divisor", (1, 2, 4, 4), dict(kernel_size=2, divisor_override=3)),
    ("negative_divisor", (1, 2, 4, 4), dict(kernel_size=2, divisor_override=-3)),  # divides (was 0)
    ("unbatched", (2, 5, 4), dict(kernel_size=(2, 1))),
]
ADAPTIVE = [("same", (1, 2, 4, 4), 4), ("divisible", (2, 2, 6, 4), (3, 2)), ("uneven", (1, 2, 7, 5), (3, 4)),
            ("global", (2, 3, 5, 5), 1), ("upsample", (1, 1, 2, 3), (3, 5)), ("unbatched", (2, 5, 6), (2, 3))]

CASES = (
    [case(f"max_pool2d_{n}", s, F.max_pool2d, np_pool2d, **kw) for n, s, kw in MAX2D]
    + [case(f"avg_pool2d_{n}", s, F.avg_pool2d, np_pool2d, np=dict(mode="avg"), **kw) for n, s, kw in AVG2D]
    + [case(f"max_pool1d_{n}", s, F.max_pool1d, np_pool1d, **kw) for n, s, kw in [
        ("k2", (2, 3, 8), dict(kernel_size=2)),
        ("k3_s2_p1_d2_ceil", (1, 2, 9), dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
        ("unbatched", (2, 7), dict(kernel_size=3, stride=1))]]
    + [case(f"avg_pool1d_{n}", s, F.avg_pool1d, np_pool1d, np=dict(mode="avg"), **kw) for n, s, kw in [
        ("k2", (2, 3, 8), dict(kernel_size=2)),
        ("k3_s2_p1", (1, 2, 9), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False))]]
    + [OpCase(f"adaptive_avg_pool2d_{n}", lambda x, o=o: F.adaptive_avg_pool2d(x, o),
              lambda a, o=o: np_adaptive2d(a, o), [[s]], dtypes=FLOATS, rtol=1e-5, atol=1e-5) for n, s, o in ADAPTIVE]
    + [OpCase(f"adaptive_max_pool2d_{n}", lambda x, o=o: F.adaptive_max_pool2d(x, o),
              lambda a, o=o: np_adaptive2d(a, o, "max"), [[s]], dtypes=FLOATS) for n, s, o in ADAPTIVE]
    + [OpCase("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 3),
              lambda a: np_adaptive2d(a[..., None, :], (1, 3))[..., 0, :], [[(2, 3, 7)]], dtypes=FLOATS,
              rtol=1e-5, atol=1e-5)]
)

test_forward, test_gradcheck = table_tests(CASES)


def test_max_pool_indices():
    x = random_array((2, 3, 7, 7))
    out, idx = F.max_pool2d(make(x), 3, 2, 1, return_indices=True)
    ref_out, ref_idx = np_pool2d(x, 3, 2, 1, return_indices=True)
    assert_close(out, ref_out)
    assert idx.dtype == ember.int64
    np.testing.assert_array_equal(to_numpy(idx), ref_idx)
    out1, idx1 = F.max_pool1d(make(x[0]), 2, return_indices=True)
    ref1 = np_pool2d(x[0][:, :, None, :], (1, 2), return_indices=True)[1][:, :, 0, :]  # [N, C, L] as [N, C, 1, L]
    np.testing.assert_array_equal(to_numpy(idx1), ref1)


def test_non_contiguous_input():
    x = random_array((2, 3, 6, 5))
    xt = make(np.ascontiguousarray(x.transpose(0, 1, 3, 2))).transpose(2, 3)
    assert_close(F.max_pool2d(xt, 2), np_pool2d(x, 2))
    assert_close(F.avg_pool2d(xt, 3, 1, 1), np_pool2d(x, 3, 1, 1, mode="avg"), 1e-5, 1e-5)


def test_half_types():
    x = random_array((1, 2, 4, 4))
    for dt in (ember.float16, ember.bfloat16):
        out = F.max_pool2d(make(x).to(dt), 2)
        assert out.dtype == dt
        assert_close(out.float(), np_pool2d(x.astype(np.float64), 2), 2e-2, 2e-2)


def test_grad_fn_names_and_double_backward():
    x = make(random_array((1, 2, 4, 4), np.float64), requires_grad=True)
    assert F.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert F.avg_pool2d(x, 2).grad_fn.name() == "AvgPool2DBackward0"
    assert F.adaptive_avg_pool2d(x, 2).grad_fn.name() == "AdaptiveAvgPool2DBackward0"
    g = make(random_array((1, 2, 2, 2), np.float64), requires_grad=True)

    for op in (lambda t: F.avg_pool2d(t, 3, 2, 1), lambda t: F.max_pool2d(t, 2), lambda t: F.adaptive_avg_pool2d(t, 2)):
        def grad_of(g_, op=op):
            (gx,) = ember.autograd.grad(op(x), [x], grad_outputs=[g_], create_graph=True)
            return gx * gx
        assert ember.autograd.gradcheck(grad_of, [g])


def test_adaptive_none_output_size():
    x = random_array((1, 2, 5, 6))
    assert tuple(F.adaptive_avg_pool2d(make(x), (None, 3)).shape) == (1, 2, 5, 3)


def test_errors():
    x = make(random_array((1, 2, 4, 4)))
    with pytest.raises(RuntimeError, match="max_pool2d: pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="avg_pool2d: pad should be at most half"):
        F.avg_pool2d(x, 3, padding=2)
    with pytest.raises(RuntimeError, match="max_pool2d: .*output size .* is too small"):
        F.max_pool2d(x, 5)
    with pytest.raises(RuntimeError, match="max_pool2d: expected 3-D or 4-D"):
        F.max_pool2d(make(random_array((4, 4))), 2)
    with pytest.raises(RuntimeError, match="avg_pool2d: stride must be greater than zero"):
        F.avg_pool2d(x, 2, stride=0)
    with pytest.raises(RuntimeError, match="max_pool2d: kernel_size must be greater than zero"):
        F.max_pool2d(x, 0)
    with pytest.raises(RuntimeError, match="avg_pool2d: divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="adaptive_avg_pool2d: expected 3-D or 4-D"):
        F.adaptive_avg_pool2d(make(random_array((4,))), 2)
    with pytest.raises(RuntimeError, match="max_pool2d: expected input of size .* non-zero"):
        F.max_pool2d(ember.zeros(1, 0, 4, 4), 2)
    with pytest.raises(RuntimeError, match="max_pool1d: expected 2-D or 3-D"):
        F.max_pool1d(x, 2)


def test_max_pool_propagates_nan():
    x = random_array((1, 1, 4, 4))
    x[0, 0, 1, 0] = np.nan
    out, idx = F.max_pool2d(make(x), 2, return_indices=True)
    assert np.isnan(to_numpy(out)[0, 0, 0, 0]) and not np.isnan(to_numpy(out)[0, 0, 1, 1])
    assert to_numpy(idx)[0, 0, 0, 0] == 4
    out = F.adaptive_max_pool2d(make(x), 1)
    assert np.isnan(to_numpy(out)).all()


@pytest.mark.parametrize("output_size", [1, (1, 1)])
def test_global_adaptive_avg_pool_is_a_plane_mean(output_size):
    # Output 1 x 1 is taken as a mean over each plane (batched, unbatched, a permuted input,
    # bfloat16), with its gradient.
    a = random_array((2, 3, 5, 7), np.float64)
    x = make(a, requires_grad=True)
    got = ember.nn.functional.adaptive_avg_pool2d(x, output_size)
    assert got.shape == (2, 3, 1, 1)
    assert_close(got, a.mean((2, 3), keepdims=True), 1e-12, 1e-12)
    assert ember.autograd.gradcheck(lambda t: ember.nn.functional.adaptive_avg_pool2d(t, output_size), [x])
    assert_close(ember.nn.functional.adaptive_avg_pool2d(make(a[0]), output_size), a[0].mean((1, 2), keepdims=True),
                 1e-12, 1e-12)
    nhwc = make(np.ascontiguousarray(a.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    assert_close(ember.nn.functional.adaptive_avg_pool2d(nhwc, output_size), a.mean((2, 3), keepdims=True),
                 1e-12, 1e-12)
    half = ember.nn.functional.adaptive_avg_pool2d(make(a).to(ember.bfloat16), output_size)
    assert half.dtype == ember.bfloat16
    assert_close(half.float(), a.mean((2, 3), keepdims=True), 1e-2, 1e-2)
