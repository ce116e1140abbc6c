"""addmm / linear with a bias vector on CUDA, which cuda/matmul.cpp runs as one
cublasLtMatmul with the BIAS epilogue (and through the copy + GEMM path when
that does not apply), against the CPU.

Every test needs a CUDA GPU and skips, saying why, without one.
"""
import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

TOL = {ember.float32: (1e-5, 1e-4), ember.float16: (1e-2, 2e-2), ember.bfloat16: (3e-2, 5e-2)}


@pytest.fixture(autouse=True)
def full_float32_precision():
    before = ember.get_float32_matmul_precision()
    ember.set_float32_matmul_precision("highest")
    yield
    ember.set_float32_matmul_precision(before)


def rand(shape, seed):
    rng = np.random.default_rng(seed)
    return ember.tensor(np.round(rng.standard_normal(shape) * 8) / 8, dtype=ember.float32)


def check(fn, tensors, dtype):
    want = fn(*[t.to(ember.float64) for t in tensors]).numpy()
    got = fn(*[t.to(dtype).cuda() for t in tensors])
    assert got.is_cuda and got.dtype == dtype
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.cpu().to(ember.float64).numpy(), want, rtol=rtol, atol=atol * np.abs(want).max())


DTYPES = [ember.float32, ember.float16, ember.bfloat16]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (5, 7, 3), (64, 300, 129), (3, 1000, 8)])
def test_addmm_with_a_bias_vector(m, k, n, dtype):
    check(lambda c, a, b: ember.addmm(c, a, b), [rand((n,), 1), rand((m, k), 2), rand((k, n), 3)], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_linear_transposed_weight_and_alpha(dtype):
    x, w, b = rand((33, 20), 4), rand((17, 20), 5), rand((17,), 6)
    check(lambda x, w, b: ember.nn.functional.linear(x, w, b), [x, w, b], dtype)
    check(lambda b, x, w: ember.addmm(b, x, w.t(), alpha=-1.5), [b, x, w], dtype)
    check(lambda b, x, w: ember.addmm(b, x.t().contiguous().t(), w.t()), [b, x, w], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_bias_views_and_scaled_bias_take_the_other_path(dtype):
    x, w = rand((9, 6), 7), rand((6, 5), 8)
    wide = rand((11,), 9)
    # An unaligned bias (offset by one element), a strided one, and beta != 1.
    check(lambda b, x, w: ember.addmm(b[1:6], x, w), [wide, x, w], dtype)
    check(lambda b, x, w: ember.addmm(b[::2][:5], x, w), [wide, x, w], dtype)
    check(lambda b, x, w: ember.addmm(b[:5], x, w, beta=0.5), [wide, x, w], dtype)


def test_tf32_bias_epilogue_is_close():
    ember.set_float32_matmul_precision("high")
    x, w, b = rand((64, 256), 10), rand((256, 32), 11), rand((32,), 12)
    want = ember.addmm(b.double(), x.double(), w.double()).numpy()
    got = ember.addmm(b.cuda(), x.cuda(), w.cuda()).cpu().double().numpy()
    np.testing.assert_allclose(got, want, rtol=5e-3, atol=5e-3 * np.abs(want).max())


def test_bias_gradients_flow_through_the_epilogue_path():
    x, w, b = rand((6, 4), 13), rand((3, 4), 14), rand((3,), 15)
    grads = []
    for dev in ("cpu", "cuda"):
        ts = [t.to(dev).detach().requires_grad_(True) for t in (x, w, b)]
        ember.nn.functional.linear(*ts).square().sum().backward()
        grads.append([t.grad.cpu().numpy() for t in ts])
    for gc, gg in zip(*grads):
        np.testing.assert_allclose(gg, gc, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16], ids=str)
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
def test_plain_products_through_cublaslt(monkeypatch, dtype, layout):
    # EMBER_MATMUL_BACKEND=cublaslt runs single half-precision products as one
    # cublasLtMatmul without an epilogue (bench/matmul.py times it next to cublasGemmEx).
    monkeypatch.setenv("EMBER_MATMUL_BACKEND", "cublaslt")
    a, b = rand((70, 96), 11), rand((96, 40), 12)
    a = a.t().contiguous().t() if layout[0] == "t" else a
    b = b.t().contiguous().t() if layout[1] == "t" else b
    check(lambda x, y: x @ y, [a, b], dtype)
    check(lambda x, y: ember.mm(x, y) * 1.0, [a, b], dtype)
    # Batched and odd-sized products still take cuBLAS's other calls.
    check(lambda x, y: (x.unsqueeze(0) @ y.unsqueeze(0)).squeeze(0), [a, b], dtype)
    check(lambda x, y: x[:, 1:] @ y[1:, :3], [a, b], dtype)
