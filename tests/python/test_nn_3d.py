"""conv3d / conv_transpose3d, the 3-D pools and their modules: against numpy loops (always), torch (when
importable), gradcheck in float64, and bad input."""
import itertools

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from harness import OpCase, table_tests, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
_F = (np.float32, np.float64)
RNG = np.random.default_rng(3)


def npy(t):
    return t.detach().cpu().numpy()


def np_conv3d(x, w, b=None, stride=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1):
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in padding])
    oc, cg = w.shape[:2]
    outs = [(n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(x.shape[2:], w.shape[2:], stride, dilation)]
    out = np.zeros((x.shape[0], oc, *outs))
    og = oc // groups
    for kd, kh, kw in itertools.product(*[range(k) for k in w.shape[2:]]):
        sl = x[:, :, kd * dilation[0]::stride[0], kh * dilation[1]::stride[1], kw * dilation[2]::stride[2]]
        sl = sl[:, :, :outs[0], :outs[1], :outs[2]]
        for g in range(groups):
            out[:, g * og:(g + 1) * og] += np.einsum("ncdhw,oc->nodhw", sl[:, g * cg:(g + 1) * cg],
                                                     w[g * og:(g + 1) * og, :, kd, kh, kw])
    if b is not None:
        out += b.reshape(1, -1, 1, 1, 1)
    return out.astype(w.dtype)


def np_conv_transpose3d(x, w, stride, padding, output_padding, groups=1, dilation=(1, 1, 1)):
    """The adjoint, by its definition: input position i's tap k lands at i*stride + k*dilation."""
    cin, cog = w.shape[:2]
    cg = cin // groups
    natural = [(n - 1) * s + d * (k - 1) + 1 for n, k, s, d in zip(x.shape[2:], w.shape[2:], stride, dilation)]
    outs = [n - 2 * p + op for n, p, op in zip(natural, padding, output_padding)]
    full = np.zeros((x.shape[0], cog * groups, *[max(n, p + o) for n, p, o in zip(natural, padding, outs)]))
    ins = x.shape[2:]
    for kd, kh, kw in itertools.product(*[range(k) for k in w.shape[2:]]):
        starts = [k * d for k, d in zip((kd, kh, kw), dilation)]
        region = tuple(slice(st, st + (n - 1) * s + 1, s) for st, n, s in zip(starts, ins, stride))
        for g in range(groups):
            full[(slice(None), slice(g * cog, (g + 1) * cog)) + region] += np.einsum(
                "ncdhw,co->nodhw", x[:, g * cg:(g + 1) * cg].astype(np.float64), w[g * cg:(g + 1) * cg, :, kd, kh, kw])
    crop = tuple(slice(p, p + o) for p, o in zip(padding, outs))
    return full[(slice(None), slice(None)) + crop].astype(w.dtype)


def np_pool3d(x, k, s, p, reduce):
    """Max (padding -inf) or sum (padding 0) over each window; no ceil mode, no dilation."""
    fill = -np.inf if reduce == "max" else 0.0
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(q, q) for q in p], constant_values=fill)
    outs = [(n + 2 * q - kk) // ss + 1 for n, kk, ss, q in zip(x.shape[2:], k, s, p)]
    out = np.zeros(x.shape[:2] + tuple(outs))
    for od, oh, ow in itertools.product(*[range(o) for o in outs]):
        win = xp[:, :, od * s[0]:od * s[0] + k[0], oh * s[1]:oh * s[1] + k[1], ow * s[2]:ow * s[2] + k[2]]
        out[:, :, od, oh, ow] = win.max((2, 3, 4)) if reduce == "max" else win.sum((2, 3, 4))
    return out


def np_adaptive_avg3d(x, sizes):
    out = np.zeros(x.shape[:2] + tuple(sizes))
    bounds = [[(i * n // o, -(-(i + 1) * n // o)) for i in range(o)] for n, o in zip(x.shape[2:], sizes)]
    for (i, (d0, d1)), (j, (h0, h1)), (k, (w0, w1)) in itertools.product(*[enumerate(b) for b in bounds]):
        out[:, :, i, j, k] = x[:, :, d0:d1, h0:h1, w0:w1].astype(np.float64).mean((2, 3, 4))
    return out.astype(x.dtype)


W1 = RNG.standard_normal((4, 2, 2, 3, 2))  # [OC, C, KD, KH, KW]
W2 = RNG.standard_normal((4, 1, 3, 2, 2))  # groups=2
WT = RNG.standard_normal((2, 3, 2, 2, 3))  # transposed: [Cin, Cout, KD, KH, KW]


def _w(array, like):
    return ember.tensor(array, dtype=like.dtype, device=like.device)


CASES = [
    OpCase("conv3d", lambda x: F.conv3d(x, _w(W1, x)), lambda a: np_conv3d(a, W1.astype(a.dtype)),
           [[(2, 2, 4, 5, 4)]], dtypes=_F, rtol=1e-4, atol=1e-5),
    OpCase("conv3d_stride_pad_dil", lambda x: F.conv3d(x, _w(W1, x), None, (2, 1, 2), (1, 0, 1), (1, 2, 1)),
           lambda a: np_conv3d(a, W1.astype(a.dtype), None, (2, 1, 2), (1, 0, 1), (1, 2, 1)),
           [[(1, 2, 5, 6, 5)]], dtypes=_F, rtol=1e-4, atol=1e-5),
    OpCase("conv3d_groups", lambda x: F.conv3d(x, _w(W2, x), None, 1, (1, 0, 0), 1, 2),
           lambda a: np_conv3d(a, W2.astype(a.dtype), None, (1, 1, 1), (1, 0, 0), (1, 1, 1), 2),
           [[(1, 2, 3, 4, 3)]], dtypes=_F, rtol=1e-4, atol=1e-5),
    OpCase("conv_transpose3d", lambda x: F.conv_transpose3d(x, _w(WT, x), None, (2, 1, 2), (1, 0, 1), (1, 0, 0)),
           lambda a: np_conv_transpose3d(a, WT.astype(a.dtype), (2, 1, 2), (1, 0, 1), (1, 0, 0)),
           [[(1, 2, 3, 3, 2)]], dtypes=_F, rtol=1e-4, atol=1e-5),
    OpCase("conv_transpose3d_dil", lambda x: F.conv_transpose3d(x, _w(WT, x), None, 1, 0, 0, 1, (2, 1, 1)),
           lambda a: np_conv_transpose3d(a, WT.astype(a.dtype), (1, 1, 1), (0, 0, 0), (0, 0, 0), 1, (2, 1, 1)),
           [[(2, 2, 2, 3, 2)]], dtypes=_F, rtol=1e-4, atol=1e-5),
    OpCase("max_pool3d", lambda x: F.max_pool3d(x, 2), lambda a: np_pool3d(a, (2, 2, 2), (2, 2, 2), (0, 0, 0), "max"),
           [[(2, 3, 4, 5, 6)]], dtypes=_F),
    OpCase("max_pool3d_stride_pad", lambda x: F.max_pool3d(x, (3, 2, 3), (2, 1, 2), (1, 1, 1)),
           lambda a: np_pool3d(a, (3, 2, 3), (2, 1, 2), (1, 1, 1), "max"), [[(1, 2, 5, 4, 5)]], dtypes=_F),
    OpCase("avg_pool3d", lambda x: F.avg_pool3d(x, 2), lambda a: np_pool3d(a, (2, 2, 2), (2, 2, 2), (0, 0, 0), "sum") / 8,
           [[(2, 3, 4, 5, 6)]], dtypes=_F),
    OpCase("avg_pool3d_pad", lambda x: F.avg_pool3d(x, 3, 2, 1),
           lambda a: np_pool3d(a, (3, 3, 3), (2, 2, 2), (1, 1, 1), "sum") / 27, [[(1, 2, 5, 4, 5)]], dtypes=_F),
    OpCase("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)),
           lambda a: np_adaptive_avg3d(a, (2, 3, 2)), [[(2, 2, 5, 4, 3)]], dtypes=_F),
    OpCase("adaptive_max_pool3d_global", lambda x: F.adaptive_max_pool3d(x, 1),
           lambda a: a.max((2, 3, 4), keepdims=True), [[(2, 3, 3, 4, 2)]], dtypes=_F),
]

test_forward, test_gradcheck = table_tests(CASES)


def test_conv3d_matches_numpy_with_bias_and_unbatched_input():
    x = RNG.standard_normal((2, 5, 4, 6)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    out = F.conv3d(ember.tensor(x), ember.tensor(W1.astype(np.float32)), ember.tensor(b), padding=1)
    assert out.shape == (4, 6, 4, 7)
    np.testing.assert_allclose(npy(out), np_conv3d(x[None], W1.astype(np.float32), b, padding=(1, 1, 1))[0],
                               rtol=1e-4, atol=1e-4)


def test_conv3d_padding_same_and_valid():
    x = ember.randn(1, 2, 5, 4, 6)
    w = ember.randn(3, 2, 2, 3, 4)
    same = F.conv3d(x, w, padding="same")
    assert same.shape == (1, 3, 5, 4, 6)
    # 'same' with even kernels pads the odd extra at the end: (0, 1), (1, 1), (1, 2).
    manual = F.conv3d(F.pad(x, [1, 2, 1, 1, 0, 1]), w)
    np.testing.assert_allclose(npy(same), npy(manual), rtol=1e-5, atol=1e-5)
    assert F.conv3d(x, w, padding="valid").shape == (1, 3, 4, 2, 3)


def test_max_pool3d_indices_unpool_round_trip():
    x = ember.randn(2, 3, 4, 6, 4)
    values, indices = F.max_pool3d(x, 2, return_indices=True)
    assert indices.dtype == ember.int64
    flat = npy(x).reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, npy(indices).reshape(2, 3, -1), -1),
                                  npy(values).reshape(2, 3, -1))
    restored = F.max_unpool3d(values, indices, 2)
    assert restored.shape == x.shape
    assert float((restored != 0).sum()) == values.numel()


def test_modules_shapes_parameters_and_repr():
    conv = nn.Conv3d(2, 4, 3, stride=(1, 2, 2), padding=1, bias=False)
    assert conv.weight.shape == (4, 2, 3, 3, 3) and conv.bias is None
    assert conv(ember.randn(1, 2, 4, 6, 6)).shape == (1, 4, 4, 3, 3)
    assert "kernel_size=(3, 3, 3)" in repr(conv)
    convt = nn.ConvTranspose3d(4, 2, 2, stride=2)
    assert convt.weight.shape == (4, 2, 2, 2, 2)
    assert convt(ember.randn(1, 4, 2, 3, 3)).shape == (1, 2, 4, 6, 6)
    assert convt(ember.randn(1, 4, 2, 3, 3), output_size=(5, 7, 6)).shape == (1, 2, 5, 7, 6)
    x = ember.randn(2, 3, 4, 6, 6)
    assert nn.MaxPool3d(2)(x).shape == (2, 3, 2, 3, 3)
    assert nn.AvgPool3d(3, 1, 1)(x).shape == x.shape
    assert nn.AdaptiveAvgPool3d((1, None, 2))(x).shape == (2, 3, 1, 6, 2)
    out, idx = nn.AdaptiveMaxPool3d(2, return_indices=True)(x)
    assert out.shape == idx.shape == (2, 3, 2, 2, 2)
    assert nn.LPPool3d(2, 2)(x.abs()).shape == (2, 3, 2, 3, 3)
    bn = nn.BatchNorm3d(3)
    y = bn(x)
    np.testing.assert_allclose(npy(y).mean((0, 2, 3, 4)), 0, atol=1e-5)
    with pytest.raises(ValueError, match="expected 5D input"):
        bn(ember.randn(2, 3, 4, 4))


def test_conv3d_module_padding_modes():
    conv = nn.Conv3d(1, 1, 3, padding=1, padding_mode="circular", bias=False)
    x = ember.randn(1, 1, 3, 4, 5)
    expected = F.conv3d(F.pad(x, [1, 1, 1, 1, 1, 1], mode="circular"), conv.weight)
    np.testing.assert_allclose(npy(conv(x)), npy(expected), rtol=1e-5, atol=1e-6)


def test_a_small_3d_network_trains():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv3d(1, 4, 3, padding=1), nn.BatchNorm3d(4), nn.ReLU(), nn.MaxPool3d(2),
                          nn.Conv3d(4, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool3d(1), nn.Flatten(),
                          nn.Linear(4, 2))
    x = ember.randn(8, 1, 4, 4, 4)
    target = (x.mean((1, 2, 3, 4)) > 0).long()
    opt = ember.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        loss = F.cross_entropy(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("call, message", [
    (lambda: F.conv3d(ember.randn(1, 2, 4, 4), ember.randn(3, 2, 2, 2)), "5-D weight"),
    (lambda: F.conv3d(ember.randn(4, 4, 4), ember.randn(3, 2, 2, 2, 2)), "4-D \\(unbatched\\)"),
    (lambda: F.conv3d(ember.randn(1, 3, 4, 4, 4), ember.randn(4, 2, 2, 2, 2)), "to have 2 channels"),
    (lambda: F.conv3d(ember.randn(1, 2, 1, 4, 4), ember.randn(4, 2, 2, 2, 2)), "kernel depth"),
    (lambda: F.conv3d(ember.randn(1, 2, 4, 4, 4), ember.randn(4, 2, 2, 2, 2), stride=(1, 1)), "stride"),
    (lambda: F.conv3d(ember.randn(1, 2, 4, 4, 4), ember.randn(4, 2, 2, 2, 2).double()), "same dtype"),
    (lambda: F.conv3d(ember.randn(1, 2, 4, 4, 4), ember.randn(4, 2, 2, 2, 2), padding="same", stride=2),
     "strided"),
    (lambda: F.conv_transpose3d(ember.randn(1, 2, 2, 2, 2), ember.randn(2, 1, 2, 2, 2), stride=2,
                                output_padding=2), "output padding"),
    (lambda: F.max_pool3d(ember.randn(1, 1, 4, 4, 4), 2, padding=2), "at most half"),
    (lambda: F.max_pool3d(ember.randn(1, 1, 1, 4, 4), 2), "too small"),
    (lambda: F.max_pool3d(ember.ones(1, 1, 2, 2, 2, dtype=ember.int64), 2), "floating point"),
    (lambda: F.avg_pool3d(ember.randn(1, 1, 4, 4, 4), 2, divisor_override=0), "divisor"),
    (lambda: F.adaptive_avg_pool3d(ember.randn(1, 1, 4, 4, 4), (2, 2)), "3 elements"),
])
def test_bad_input_names_the_op(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


@needs_torch
@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3, 2), stride=(1, 2, 3), ceil_mode=True),
    dict(kernel_size=3, stride=2, dilation=2, padding=1, ceil_mode=True),
])
def test_max_pool3d_matches_torch_values_indices_and_grads(kwargs):
    a = RNG.standard_normal((2, 3, 7, 8, 9)).astype(np.float32)
    g = RNG.standard_normal(torch.nn.functional.max_pool3d(torch.from_numpy(a), **kwargs).shape).astype(np.float32)
    xt = torch.from_numpy(a).requires_grad_()
    vt, it = torch.nn.functional.max_pool3d(xt, return_indices=True, **kwargs)
    vt.backward(torch.from_numpy(g))
    xe = ember.tensor(a, requires_grad=True)
    ve, ie = F.max_pool3d(xe, return_indices=True, **kwargs)
    ve.backward(ember.tensor(g))
    np.testing.assert_array_equal(npy(ve), vt.detach().numpy())
    np.testing.assert_array_equal(npy(ie), it.numpy())
    np.testing.assert_allclose(npy(xe.grad), xt.grad.numpy(), rtol=1e-6, atol=1e-6)  # overlapping windows: sum order


@needs_torch
@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(2, 3, 2), stride=(1, 2, 3), ceil_mode=True, divisor_override=5),
])
def test_avg_pool3d_matches_torch(kwargs):
    a = RNG.standard_normal((2, 3, 7, 8, 9)).astype(np.float32)
    np.testing.assert_allclose(npy(F.avg_pool3d(ember.tensor(a), **kwargs)),
                               torch.nn.functional.avg_pool3d(torch.from_numpy(a), **kwargs).numpy(),
                               rtol=1e-5, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("size", [1, (3, 4, 5), (None, 3, 2), (4, 5, 4), (7, 8, 9)])
def test_adaptive_pools_match_torch(size):
    a = RNG.standard_normal((2, 3, 7, 8, 9)).astype(np.float32)
    xt = torch.from_numpy(a)
    np.testing.assert_allclose(npy(F.adaptive_avg_pool3d(ember.tensor(a), size)),
                               torch.nn.functional.adaptive_avg_pool3d(xt, size).numpy(), rtol=1e-5, atol=1e-6)
    ve, ie = F.adaptive_max_pool3d(ember.tensor(a), size, return_indices=True)
    vt, it = torch.nn.functional.adaptive_max_pool3d(xt, size, return_indices=True)
    np.testing.assert_array_equal(npy(ve), vt.numpy())
    np.testing.assert_array_equal(npy(ie), it.numpy())


@needs_torch
def test_conv3d_and_transpose_match_torch_with_groups_and_output_padding():
    a = RNG.standard_normal((2, 4, 5, 6, 5)).astype(np.float32)
    w = RNG.standard_normal((6, 2, 3, 2, 3)).astype(np.float32)
    b = RNG.standard_normal(6).astype(np.float32)
    args = ((2, 1, 2), (1, 0, 1), (1, 2, 1), 2)
    np.testing.assert_allclose(npy(F.conv3d(ember.tensor(a), ember.tensor(w), ember.tensor(b), *args)),
                               torch.nn.functional.conv3d(*map(torch.from_numpy, (a, w, b)), *args).numpy(),
                               rtol=1e-4, atol=1e-4)
    wt = RNG.standard_normal((4, 3, 2, 3, 2)).astype(np.float32)
    targs = ((2, 1, 2), (1, 0, 1), (1, 0, 1), 2, (1, 2, 1))
    np.testing.assert_allclose(npy(F.conv_transpose3d(ember.tensor(a), ember.tensor(wt), None, *targs)),
                               torch.nn.functional.conv_transpose3d(torch.from_numpy(a), torch.from_numpy(wt), None,
                                                                    *targs).numpy(), rtol=1e-4, atol=1e-4)
