"""layer_norm / rms_norm weight and bias gradients on CUDA against the CPU,
at GPT-2-like shapes ([8, 1024, 768]: 8,192 rows, summed in row chunks by
cuda/norm.cu) and at the edges of the chunking (one row, a few rows, one
column, thousands of rows of few columns), float32 and bfloat16 (and float16,
float64 at small shapes); the gradients must also be the same on every run.
batch_norm in training, forward (statistics, running statistics) and
backward, where cuda/norm.cu splits each channel's sums across blocks (few
channels of many values) and where it does not.

Every test needs a CUDA GPU and skips, saying why, without one. Inputs are
made on the CPU with values exact in every dtype, copied to the GPU, and the
gradients copied back and compared with tolerances by dtype.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import needs_gpu

pytestmark = needs_gpu
DEVICE = "cuda"  # the device under test; the CPU is the reference

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

# (rtol, atol) of a CUDA gradient against the CPU's: both sum in float32
# (float64 for float64) in different orders; 16-bit parameters' gradients are
# rounded to their dtype at the end (one ulp apart at worst).
TOL = {
    ember.float32: (2e-4, 2e-3),
    ember.float64: (1e-10, 1e-10),
    ember.float16: (2e-3, 2e-2),
    ember.bfloat16: (1.6e-2, 2e-2),
}


def as_np(t):
    return t.detach().cpu().to(ember.float64).numpy()


def make(shape, seed, dtype, scale=8):
    rng = np.random.default_rng(seed)
    # Multiples of 1/scale below 32 in magnitude: exact in bfloat16 and float16.
    x = np.clip(np.round(rng.standard_normal(shape) * scale) / scale, -31, 31)
    return ember.tensor(x, dtype=dtype)


def grads(norm, device, x0, g0, w0, b0, want_x=True):
    x = x0.to(device).detach().requires_grad_(want_x)
    w = w0.to(device).detach().requires_grad_(True) if w0 is not None else None
    b = b0.to(device).detach().requires_grad_(True) if b0 is not None else None
    y = norm(x, w, b)
    y.backward(g0.to(device))
    return (x.grad if want_x else None), (w.grad if w is not None else None), (b.grad if b is not None else None)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def rms_norm(x, w, b):
    assert b is None
    return F.rms_norm(x, (x.shape[-1],), w)


def compare(norm, shape, dtype, bias=True, want_x=True, seed=0):
    cols = shape[-1]
    x = make(shape, seed, dtype)
    g = make(shape, seed + 1, dtype, scale=4)
    w = make((cols,), seed + 2, dtype) if norm is layer_norm else make((cols,), seed + 2, dtype).abs() + 0.5
    b = make((cols,), seed + 3, dtype) if bias and norm is layer_norm else None
    cpu = grads(norm, "cpu", x, g, w, b, want_x)
    gpu = grads(norm, DEVICE, x, g, w, b, want_x)
    rtol, atol = TOL[dtype]
    rows = int(np.prod(shape[:-1]))
    # Column sums over `rows` terms of size ~1: the absolute error grows like sqrt(rows).
    atol_sum = atol * max(1.0, np.sqrt(rows) / 8)
    names = ("input", "weight", "bias")
    for name, c, d in zip(names, cpu, gpu):
        if c is None:
            assert d is None, name
            continue
        assert d.device.type == DEVICE and d.dtype == c.dtype and d.shape == c.shape, name
        np.testing.assert_allclose(as_np(d), as_np(c), rtol=rtol, atol=atol if name == "input" else atol_sum,
                                   err_msg=f"{name} gradient")
    return gpu


@pytest.mark.parametrize("dtype", [ember.float32, ember.bfloat16])
def test_layer_norm_gpt2_shape(dtype):
    compare(layer_norm, (8, 1024, 768), dtype)


@pytest.mark.parametrize("dtype", [ember.float32, ember.bfloat16])
def test_rms_norm_gpt2_shape(dtype):
    compare(rms_norm, (8, 1024, 768), dtype, bias=False)


@pytest.mark.parametrize("shape", [(1, 768), (3, 33), (100, 7), (300, 1), (5003, 3), (4999, 40), (2, 4096), (257, 65)])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16, ember.bfloat16])
def test_layer_norm_param_grads_edges(shape, dtype):
    compare(layer_norm, shape, dtype)


@pytest.mark.parametrize("shape", [(1, 5), (600, 9), (4, 2, 640)])
def test_rms_norm_param_grads_edges(shape):
    compare(rms_norm, shape, ember.float32, bias=False)


def test_weight_only_and_no_input_grad():
    # Only the parameters want gradients (no gx kernel); no bias (gb undefined).
    compare(layer_norm, (2048, 96), ember.float32, bias=False, want_x=False)
    compare(layer_norm, (2048, 96), ember.bfloat16, bias=True, want_x=False)


def test_param_grads_are_deterministic():
    x = make((4, 1024, 768), 5, ember.bfloat16)
    g = make((4, 1024, 768), 6, ember.bfloat16, scale=4)
    w = make((768,), 7, ember.float32)
    b = make((768,), 8, ember.float32)
    first = grads(layer_norm, DEVICE, x, g, w, b)
    for _ in range(2):
        again = grads(layer_norm, DEVICE, x, g, w, b)
        for a, c in zip(first, again):
            assert np.array_equal(as_np(a), as_np(c))


@pytest.mark.parametrize("shape,dtype", [
    ((32, 16, 28, 28), ember.float32),   # 25,088 values per channel: split in 3
    ((16, 4, 60, 61), ember.float64),    # 58,560: split in 7, chunks meet mid-plane
    ((20000, 3), ember.float32),         # BatchNorm1d: one value per plane, split in 2
    ((8, 300, 7, 7), ember.float32),     # many short channels: one pass
    ((6, 5, 3001), ember.bfloat16),      # computed in float32, split in 2
])
def test_batch_norm_training(shape, dtype):
    c = shape[1]
    x0 = make(shape, 11, dtype)
    g0 = make(shape, 12, dtype, scale=4)
    w0 = make((c,), 13, dtype)
    b0 = make((c,), 14, dtype)
    out = {}
    for device in ("cpu", DEVICE):
        x = x0.to(device).detach().requires_grad_(True)
        w = w0.to(device).detach().requires_grad_(True)
        b = b0.to(device).detach().requires_grad_(True)
        rm = ember.zeros(c, dtype=dtype, device=device)
        rv = ember.ones(c, dtype=dtype, device=device)
        y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3)
        y.backward(g0.to(device))
        out[device] = (y, rm, rv, x.grad, w.grad, b.grad)
    rtol, atol = TOL[dtype]
    count = int(np.prod(shape)) // c
    for name, c_, d in zip(("output", "running_mean", "running_var", "input grad", "weight grad", "bias grad"),
                           out["cpu"], out[DEVICE]):
        assert d.device.type == DEVICE and d.dtype == c_.dtype, name
        tol = atol * max(1.0, np.sqrt(count) / 8) if name in ("weight grad", "bias grad") else atol
        np.testing.assert_allclose(as_np(d), as_np(c_), rtol=rtol, atol=tol, err_msg=name)
