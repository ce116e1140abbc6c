"""GPU checks for the bugs found by the audit of the nn half of the CUDA
backend before it first ran on a GPU (cuDNN, cuBLAS/cuBLASLt and the fused
kernels' launch code). Each test targets one finding and says which; they
compare CUDA with the CPU path, and skip, saying why, without a GPU.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy


def as_np(t):
    return t.detach().cpu().to(ember.float64).numpy()


def make(shape, seed, dtype=ember.float32):
    rng = np.random.default_rng(seed)
    return ember.tensor(np.round(rng.standard_normal(shape) * 8) / 8, dtype=dtype)


def leaf(t, device):
    return t.to(device).detach().requires_grad_(True)


def forward_backward(fn, tensors, device):
    xs = [leaf(t, device) for t in tensors]
    out = fn(*xs)
    out.backward(ember.ones_like(out))
    return out, [x.grad for x in xs]


def compare(fn, tensors, rtol=1e-4, atol=1e-4):
    want, want_grads = forward_backward(fn, tensors, "cpu")
    got, got_grads = forward_backward(fn, tensors, "cuda")
    assert got.device.type == "cuda"
    np.testing.assert_allclose(as_np(got), as_np(want), rtol=rtol, atol=atol)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(as_np(g), as_np(w), rtol=rtol, atol=atol)


# ---- conv with padding="same" and an even (dilated) kernel: cuDNN pads
# symmetrically, so the odd row/column is appended to the input (core/ops/conv.cpp).

@pytest.mark.parametrize("shapes, kwargs", [
    ([(2, 3, 7, 6), (4, 3, 4, 2), (4,)], dict(padding="same")),
    ([(1, 2, 9, 8), (3, 2, 2, 3)], dict(padding="same", dilation=(3, 2))),
    ([(2, 4, 6, 6), (4, 2, 4, 4)], dict(padding="same", groups=2)),
])
def test_conv2d_same_padding_with_even_kernel(shapes, kwargs):
    tensors = [make(s, i) for i, s in enumerate(shapes)]
    with ember.backends.cudnn.flags(allow_tf32=False):
        compare(lambda *t: F.conv2d(*t, **kwargs), tensors)


def test_conv1d_same_padding_with_even_kernel():
    tensors = [make((2, 3, 10), 0), make((5, 3, 4), 1), make((5,), 2)]
    with ember.backends.cudnn.flags(allow_tf32=False):
        compare(lambda x, w, b: F.conv1d(x, w, b, padding="same"), tensors)


# ---- conv_transpose with output_padding >= stride (allowed below the
# dilation): cuDNN cannot run that geometry, so it runs as the full transposed
# conv, cropped and zero-extended (core/ops/conv.cpp's conv_transpose_cropped).

@pytest.mark.parametrize("shapes, kwargs", [
    ([(1, 2, 3, 3), (2, 2, 2, 2)], dict(dilation=3, output_padding=2)),
    ([(2, 3, 4, 5), (3, 2, 2, 3), (2,)], dict(dilation=(3, 2), output_padding=(2, 1), padding=(1, 2))),
    ([(2, 4, 4, 5), (4, 1, 2, 3), (2,)], dict(dilation=3, stride=2, output_padding=2, padding=1, groups=2)),
])
def test_conv_transpose2d_output_padding_past_stride(shapes, kwargs):
    tensors = [make(s, i) for i, s in enumerate(shapes)]
    with ember.backends.cudnn.flags(allow_tf32=False):
        compare(lambda *t: F.conv_transpose2d(*t, **kwargs), tensors)


def test_conv_transpose1d_output_padding_past_stride():
    tensors = [make((2, 3, 6), 0), make((3, 4, 3), 1)]
    with ember.backends.cudnn.flags(allow_tf32=False):
        compare(lambda x, w: F.conv_transpose1d(x, w, dilation=2, output_padding=1, padding=1), tensors)


# ---- half-precision convolutions search tensor-core algorithms
# (cuda/conv.cpp sets TENSOR_OP_MATH before cuDNN's heuristics/Find):
# results must still match the CPU, with and without benchmarking.

@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16], ids=str)
# Not named `benchmark`: that is pytest-benchmark's fixture where it is installed.
@pytest.mark.parametrize("cudnn_benchmark", [False, True])
def test_half_convolutions_match_cpu(dtype, cudnn_benchmark):
    x, w, b = make((2, 8, 9, 9), 0), make((16, 8, 3, 3), 1), make((16,), 2)

    def run(device):
        xs, ws, bs = (t.to(device).to(dtype).detach().requires_grad_(True) for t in (x, w, b))
        out = F.conv2d(xs, ws, bs, padding=1)
        out.backward(ember.ones_like(out))
        return [as_np(t) for t in (out, xs.grad, ws.grad, bs.grad)]

    with ember.backends.cudnn.flags(benchmark=cudnn_benchmark):
        want, got = run("cpu"), run("cuda")
    for name, g, c in zip(("output", "input grad", "weight grad", "bias grad"), got, want):
        scale = max(np.abs(c).max(), 1.0)
        np.testing.assert_allclose(g, c, rtol=2e-2, atol=2e-2 * scale, err_msg=name)
