"""The conv family: conv1d, conv2d, conv_transpose1d/2d against a direct-loop
numpy reference (stride, padding incl. 'same'/'valid', dilation, groups,
bias, unbatched, output_padding), gradcheck in float64 (and a double
backward), half types, and PyTorch's errors."""
import numpy as np
import pytest

import ember
from ember._C import _nn as F
from harness import OpCase, assert_close, make, random_array, table_tests

FLOATS = (np.float32, np.float64)


def pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def np_conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct conv: one einsum per kernel tap. padding: int, pair, or ((t, b), (l, r))."""
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    (sh, sw), (dh, dw) = pair(stride), pair(dilation)
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0), (0, 0))
        else:
            tot = [d * (k - 1) for d, k in zip((dh, dw), w.shape[2:])]
            pads = tuple((t // 2, t - t // 2) for t in tot)
    elif isinstance(padding, tuple) and isinstance(padding[0], tuple):
        pads = padding
    else:
        ph, pw = pair(padding)
        pads = ((ph, ph), (pw, pw))
    xp = np.pad(x, ((0, 0), (0, 0)) + pads)
    N, C, H, W = xp.shape
    OC, Cg, KH, KW = w.shape
    OH, OW = (H - dh * (KH - 1) - 1) // sh + 1, (W - dw * (KW - 1) - 1) // sw + 1
    out = np.zeros((N, OC, OH, OW), dtype=np.float64)
    OCg = OC // groups
    for g in range(groups):
        for i in range(KH):
            for j in range(KW):
                patch = xp[:, g * Cg:(g + 1) * Cg, i * dh:i * dh + sh * (OH - 1) + 1:sh,
                           j * dw:j * dw + sw * (OW - 1) + 1:sw]
                out[:, g * OCg:(g + 1) * OCg] += np.einsum("nchw,oc->nohw", patch, w[g * OCg:(g + 1) * OCg, :, i, j])
    if b is not None:
        out += b[None, :, None, None]
    out = out.astype(x.dtype)
    return out[0] if unbatched else out


def np_conv_transpose2d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Direct transposed conv: scatter each input pixel times the kernel, then crop the padding."""
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = pair(stride), pair(padding), pair(output_padding), pair(dilation)
    N, Cin, H, W = x.shape
    _, Coutg, KH, KW = w.shape
    full_h, full_w = (H - 1) * sh + dh * (KH - 1) + 1 + oph, (W - 1) * sw + dw * (KW - 1) + 1 + opw
    full = np.zeros((N, Coutg * groups, full_h, full_w), dtype=np.float64)
    Cing = Cin // groups
    for g in range(groups):
        for i in range(KH):
            for j in range(KW):
                full[:, g * Coutg:(g + 1) * Coutg, i * dh:i * dh + sh * (H - 1) + 1:sh,
                     j * dw:j * dw + sw * (W - 1) + 1:sw] += np.einsum(
                         "nchw,co->nohw", x[:, g * Cing:(g + 1) * Cing], w[g * Cing:(g + 1) * Cing, :, i, j])
    OH = (H - 1) * sh - 2 * ph + dh * (KH - 1) + oph + 1
    OW = (W - 1) * sw - 2 * pw + dw * (KW - 1) + opw + 1
    out = full[:, :, ph:ph + OH, pw:pw + OW]
    if b is not None:
        out = out + b[None, :, None, None]
    out = out.astype(x.dtype)
    return out[0] if unbatched else out


def np_conv1d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    pad = padding if isinstance(padding, str) else (0, padding if isinstance(padding, int) else padding[0])
    return np_conv2d(x[..., None, :], w[:, :, None, :], b, (1, stride), pad, (1, dilation), groups)[..., 0, :]


def np_conv_transpose1d(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return np_conv_transpose2d(x[..., None, :], w[:, :, None, :], b, (1, stride), (0, padding),
                               (0, output_padding), groups, (1, dilation))[..., 0, :]


def conv_case(name, shapes, ember_op, np_op, grad_shapes=None, **kw):
    """A row whose functions take (x, w) or (x, w, b) and bake in `kw`."""
    return OpCase(name, lambda *t: ember_op(*t, **kw), lambda *a: np_op(*a, **kw), [shapes], dtypes=FLOATS,
                  rtol=1e-4, atol=1e-4)


CONV2D = [
    ("plain", [(2, 3, 6, 6), (4, 3, 3, 3)], {}),
    ("bias", [(2, 3, 6, 5), (4, 3, 3, 2), (4,)], {}),
    ("stride", [(1, 2, 7, 7), (3, 2, 3, 3), (3,)], dict(stride=2)),
    ("stride_tuple", [(1, 2, 7, 8), (3, 2, 2, 3)], dict(stride=(2, 3))),
    ("padding", [(2, 2, 5, 5), (3, 2, 3, 3), (3,)], dict(padding=1)),
    ("padding_tuple", [(1, 2, 5, 4), (3, 2, 3, 3)], dict(padding=(2, 1), stride=(1, 2))),
    ("dilation", [(1, 2, 8, 8), (2, 2, 3, 3)], dict(dilation=2, padding=1)),
    ("groups", [(2, 4, 5, 5), (6, 2, 3, 3), (6,)], dict(groups=2)),
    ("depthwise", [(1, 3, 5, 5), (3, 1, 3, 3)], dict(groups=3, padding=1)),
    ("same_odd", [(1, 2, 5, 6), (3, 2, 3, 3), (3,)], dict(padding="same")),
    ("same_even", [(1, 2, 5, 6), (3, 2, 4, 2)], dict(padding="same")),
    ("same_dilated", [(1, 2, 7, 6), (2, 2, 2, 3)], dict(padding="same", dilation=(3, 2))),
    ("valid", [(1, 2, 5, 6), (3, 2, 3, 3)], dict(padding="valid")),
    ("unbatched", [(2, 5, 5), (3, 2, 3, 3), (3,)], dict(padding=1)),
    ("one_by_one", [(2, 3, 4, 4), (5, 3, 1, 1)], {}),
    ("kernel_equals_input", [(2, 2, 3, 3), (2, 2, 3, 3)], {}),
    ("empty_batch", [(0, 2, 4, 4), (3, 2, 3, 3)], {}),
    # 9 images: the CPU runs batches of at least 4 per thread one image per
    # thread at a time (core/cpu/conv.cpp's per-image paths)
    ("per_image", [(9, 4, 6, 5), (6, 2, 3, 3), (6,)], dict(groups=2, stride=(2, 1), padding=1, dilation=(1, 2))),
]
CONV1D = [
    ("plain", [(2, 3, 7), (4, 3, 3), (4,)], {}),
    ("stride_pad_dil", [(2, 2, 9), (3, 2, 3)], dict(stride=2, padding=2, dilation=2)),
    ("groups", [(1, 4, 6), (2, 2, 2)], dict(groups=2)),
    ("same", [(1, 2, 6), (2, 2, 4)], dict(padding="same")),
    ("unbatched", [(2, 6), (3, 2, 3)], {}),
]
CONVT2D = [
    ("plain", [(2, 3, 4, 4), (3, 2, 3, 3)], {}),
    ("bias", [(1, 2, 3, 4), (2, 3, 2, 3), (3,)], {}),
    ("stride", [(1, 2, 3, 3), (2, 2, 3, 3), (2,)], dict(stride=2)),
    ("padding", [(1, 2, 4, 4), (2, 3, 3, 3)], dict(stride=2, padding=1)),
    ("output_padding", [(1, 2, 3, 3), (2, 2, 3, 3), (2,)], dict(stride=2, padding=1, output_padding=1)),
    ("output_padding_tuple", [(1, 2, 3, 4), (2, 1, 2, 3)], dict(stride=(3, 2), output_padding=(2, 1))),
    ("dilation", [(1, 2, 3, 3), (2, 2, 2, 2)], dict(dilation=2, padding=1)),
    ("output_padding_dilation", [(1, 2, 3, 3), (2, 2, 2, 2)], dict(dilation=3, output_padding=2)),
    ("groups", [(2, 4, 3, 3), (4, 3, 2, 2), (6,)], dict(groups=2, stride=2)),
    ("unbatched", [(2, 3, 3), (2, 3, 2, 2)], dict(stride=2)),
    ("per_image", [(9, 4, 3, 3), (4, 3, 2, 2), (6,)], dict(groups=2, stride=2, padding=1, dilation=(2, 1))),
]
CONVT1D = [
    ("plain", [(2, 3, 5), (3, 2, 3), (2,)], dict(stride=2, padding=1, output_padding=1)),
    ("groups", [(1, 4, 4), (4, 1, 2)], dict(groups=2, dilation=2)),
]

CASES = (
    [conv_case(f"conv2d_{n}", s, F.conv2d, np_conv2d, **kw) for n, s, kw in CONV2D]
    + [conv_case(f"conv1d_{n}", s, F.conv1d, np_conv1d, **kw) for n, s, kw in CONV1D]
    + [conv_case(f"conv_transpose2d_{n}", s, F.conv_transpose2d, np_conv_transpose2d, **kw) for n, s, kw in CONVT2D]
    + [conv_case(f"conv_transpose1d_{n}", s, F.conv_transpose1d, np_conv_transpose1d, **kw) for n, s, kw in CONVT1D]
)

test_forward, test_gradcheck = table_tests(CASES)


def test_non_contiguous_inputs():
    x = random_array((2, 3, 5, 6))
    w = random_array((4, 3, 3, 3))
    xt = make(np.ascontiguousarray(x.transpose(0, 1, 3, 2))).transpose(2, 3)  # same values, other strides
    wt = make(np.ascontiguousarray(w.transpose(1, 0, 2, 3))).transpose(0, 1)
    assert_close(F.conv2d(xt, wt, stride=2, padding=1), np_conv2d(x, w, stride=2, padding=1), 1e-4, 1e-4)
    xs = make(np.repeat(x, 2, axis=-1))[..., ::2]
    assert_close(F.conv2d(xs, make(w)), np_conv2d(np.repeat(x, 2, axis=-1)[..., ::2], w), 1e-4, 1e-4)


def test_half_types_compute_in_float32():
    x, w = random_array((1, 2, 4, 4)), random_array((3, 2, 3, 3))
    for dt in (ember.float16, ember.bfloat16):
        out = F.conv2d(make(x).to(dt), make(w).to(dt), padding=1)
        assert out.dtype == dt
        assert_close(out.float(), np_conv2d(x, w, padding=1), rtol=5e-2, atol=5e-2)


def test_grad_fn_and_double_backward():
    x = make(random_array((1, 2, 4, 4), np.float64), requires_grad=True)
    w = make(random_array((3, 2, 3, 3), np.float64), requires_grad=True)
    b = make(random_array((3,), np.float64), requires_grad=True)
    out = F.conv2d(x, w, b, padding=1)
    assert out.grad_fn.name() == "ConvolutionBackward0"
    # Double backward by hand: d/dw of sum(grad_x^2) matches finite differences of that scalar.
    def gx_norm(w_):
        (gx,) = ember.autograd.grad(F.conv2d(x, w_, padding=1).sum(), [x], create_graph=True)
        return (gx * gx).sum()
    assert ember.autograd.gradcheck(gx_norm, [w])


def test_conv_transpose_double_backward():
    x = make(random_array((1, 2, 3, 3), np.float64), requires_grad=True)
    w = make(random_array((2, 2, 2, 2), np.float64), requires_grad=True)
    def f(w_):
        (gx,) = ember.autograd.grad((F.conv_transpose2d(x, w_, stride=2) ** 2).sum(), [x], create_graph=True)
        return gx.sum()
    assert ember.autograd.gradcheck(f, [w])


def test_top_level_names():
    x, w = make(random_array((1, 1, 3, 3))), make(random_array((1, 1, 2, 2)))
    assert_close(ember.conv2d(x, w), np_conv2d(to_np(x), to_np(w)), 1e-5, 1e-5)


def to_np(t):
    return t.detach().cpu().numpy()


def test_errors():
    x = make(random_array((1, 3, 8, 8)))
    w = make(random_array((4, 4, 3, 3)))
    with pytest.raises(RuntimeError, match=r"conv2d: .*weight of size \[4, 4, 3, 3\].*input \[1, 3, 8, 8\] to have 4 channels, but got 3"):
        F.conv2d(x, w)
    with pytest.raises(RuntimeError, match="conv2d: expected 3-D .* or 4-D"):
        F.conv2d(make(random_array((3, 8))), w)
    with pytest.raises(RuntimeError, match="conv2d: expected weight to be 4-D"):
        F.conv2d(x, make(random_array((4, 3, 3))))
    with pytest.raises(RuntimeError, match="conv2d: padded input size .* smaller than the dilated kernel"):
        F.conv2d(make(random_array((1, 3, 2, 2))), make(random_array((2, 3, 3, 3))))
    with pytest.raises(RuntimeError, match="conv2d: .*divisible by groups"):
        F.conv2d(make(random_array((1, 4, 5, 5))), make(random_array((3, 2, 3, 3))), groups=2)
    with pytest.raises(RuntimeError, match="conv2d: expected input .*float64.* and weight .*float32"):
        F.conv2d(make(random_array((1, 3, 5, 5), np.float64)), make(random_array((2, 3, 3, 3))))
    with pytest.raises(RuntimeError, match="conv2d: expected bias of size"):
        F.conv2d(x, make(random_array((2, 3, 3, 3))), make(random_array((3,))))
    with pytest.raises(RuntimeError, match="conv2d: padding='same' is not supported for strided"):
        F.conv2d(x, make(random_array((2, 3, 3, 3))), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="conv2d: invalid padding string"):
        F.conv2d(x, make(random_array((2, 3, 3, 3))), padding="full")
    with pytest.raises(RuntimeError, match="conv2d: non-positive stride"):
        F.conv2d(x, make(random_array((2, 3, 3, 3))), stride=0)
    with pytest.raises(RuntimeError, match="conv2d: negative padding"):
        F.conv2d(x, make(random_array((2, 3, 3, 3))), padding=-1)
    with pytest.raises(RuntimeError, match="conv2d: expected a floating point input"):
        F.conv2d(ember.zeros(1, 3, 4, 4, dtype=ember.int64), ember.zeros(1, 3, 3, 3, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="conv1d: .*to have 2 channels, but got 3"):
        F.conv1d(make(random_array((1, 3, 8))), make(random_array((4, 2, 3))))
    with pytest.raises(RuntimeError, match="conv_transpose2d: output padding must be smaller"):
        F.conv_transpose2d(make(random_array((1, 2, 3, 3))), make(random_array((2, 2, 3, 3))), output_padding=1)
    with pytest.raises(RuntimeError, match="conv_transpose2d: .*to have 3 channels, but got 2"):
        F.conv_transpose2d(make(random_array((1, 2, 3, 3))), make(random_array((3, 2, 3, 3))))


def test_large_images_run_in_batch_chunks():
    # 27 * 300 * 300 column entries per image: the kernels split this batch
    # into chunks of one image; the weight gradient must add up across them.
    x = make(random_array((2, 3, 302, 302)), requires_grad=True)
    w = make(random_array((2, 3, 3, 3)), requires_grad=True)
    out = F.conv2d(x, w)
    assert_close(out, np_conv2d(to_np(x), to_np(w)), 1e-4, 1e-4)
    out.sum().backward()
    gw_parts = []
    for n in range(2):
        xn = x.detach()[n:n + 1].clone().requires_grad_(True)
        wn = w.detach().clone().requires_grad_(True)
        F.conv2d(xn, wn).sum().backward()
        gw_parts.append(to_np(wn.grad))
        assert_close(x.grad[n:n + 1], to_np(xn.grad), 1e-5, 1e-5)
    assert_close(w.grad, gw_parts[0] + gw_parts[1], 1e-3, 1e-2)


@pytest.mark.parametrize("weight_shape", [(1, 1, 0, 3), (1, 1, 3, 0)])
def test_a_kernel_with_a_zero_size_is_refused(weight_shape):
    x = make(np.ones((1, 1, 4, 4), dtype=np.float32))
    w = make(np.ones(weight_shape, dtype=np.float32))
    with pytest.raises(RuntimeError, match=r"conv2d: kernel size should be greater than zero, but got weight of "
                                           r"size \[1, 1, "):
        ember.nn.functional.conv2d(x, w)
    with pytest.raises(RuntimeError, match=r"conv_transpose2d: kernel size should be greater than zero"):
        ember.nn.functional.conv_transpose2d(x, w)
    with pytest.raises(RuntimeError, match=r"conv1d: kernel size should be greater than zero"):
        ember.nn.functional.conv1d(x[0], make(np.ones((1, 1, 0), dtype=np.float32)))
