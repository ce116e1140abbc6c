"""The CUDA reductions' paths for long columns against the CPU: var/std,
logsumexp and p-norms of millions of elements split over many blocks (a
per-block partial, then a merge), cumsum as a block-wide scan per column and
as chunk sums plus per-chunk scans, nonzero over a long mask (its tile
counts prefix-summed by that cumsum), and folds over a wide inner axis (a
bias gradient's sum over the batch), in 16-bit types too.
cuda/device/reduce_kernels.cuh's fold_plan, tile_plan and cumsum_plan pick
the paths; these sizes take the split and tiled ones.

Every test needs a CUDA GPU and skips, saying why, without one. Float results
are compared with a small tolerance (the GPU adds in another order); integer
cumsums and nonzero must match exactly.
"""
import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy


def as_np(t):
    return t.detach().cpu().to(ember.float64).numpy() if t.dtype.is_floating_point else t.detach().cpu().numpy()


def close(got, want, rtol):
    np.testing.assert_allclose(as_np(got), as_np(want), rtol=rtol, atol=rtol, equal_nan=True)


def rtol_of(dtype):
    return {ember.float64: 1e-10, ember.float32: 1e-5, ember.float16: 2e-3, ember.bfloat16: 1e-2}[dtype]


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("shape,dim", [((5_000_000,), None), ((3, 400_000), 1), ((40_000, 6), 0)])
def test_norm_split(dtype, shape, dim):
    ember.manual_seed(0)
    x = ember.randn(*shape, dtype=dtype)
    g = x.cuda()
    for p in [2, 1, 0, 3.0, float("inf"), float("-inf")]:
        want = ember.norm(x, p, dim=dim)
        got = ember.norm(g, p, dim=dim)
        close(got, want, rtol_of(dtype))


def test_clip_grad_norm_of_a_large_gradient():
    ember.manual_seed(1)
    w = ember.randn(8192, 768) * 1e-3
    p_cpu = ember.nn.Parameter(ember.zeros(8192, 768))
    p_cpu.grad = w.clone()
    p_gpu = ember.nn.Parameter(ember.zeros(8192, 768, device="cuda"))
    p_gpu.grad = w.cuda()
    n_cpu = ember.nn.utils.clip_grad_norm_([p_cpu], 1.0)
    n_gpu = ember.nn.utils.clip_grad_norm_([p_gpu], 1.0)
    close(n_gpu, n_cpu, 1e-5)
    close(p_gpu.grad, p_cpu.grad, 1e-5)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_var_std_split(dtype):
    ember.manual_seed(2)
    x = ember.randn(3, 1_000_000, dtype=dtype) * 2 + 1000  # a large mean
    g = x.cuda()
    for correction in [0, 1]:
        close(ember.var(g, correction=correction), ember.var(x, correction=correction), rtol_of(dtype))
        close(ember.std(g, dim=1, correction=correction), ember.std(x, dim=1, correction=correction), rtol_of(dtype))
    close(ember.var(g.t(), dim=0), ember.var(x.t(), dim=0), rtol_of(dtype))


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_logsumexp_split(dtype):
    ember.manual_seed(3)
    x = ember.randn(2, 2_000_000, dtype=dtype) * 10
    g = x.cuda()
    close(ember.logsumexp(g, dim=1), ember.logsumexp(x, dim=1), rtol_of(dtype))
    close(ember.logsumexp(g.flatten(), dim=0), ember.logsumexp(x.flatten(), dim=0), rtol_of(dtype))


def test_split_nan_and_inf():
    x = ember.randn(4, 100_000, dtype=ember.float64)
    x[0, 77_777] = float("nan")
    x[1, 99_999] = float("inf")
    x[2, 5] = float("-inf")
    x[3] = float("-inf")
    g = x.cuda()
    close(ember.logsumexp(g, dim=1), ember.logsumexp(x, dim=1), 1e-10)
    close(ember.var(g, dim=1), ember.var(x, dim=1), 1e-10)
    for p in [2, 1, 0, 0.5, float("inf"), float("-inf")]:
        close(ember.norm(g, p, dim=1), ember.norm(x, p, dim=1), 1e-10)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16, ember.bfloat16])
def test_cumsum_long_float(dtype):
    ember.manual_seed(4)
    x = ember.randn(1_000_000).to(dtype)
    close(ember.cumsum(x.cuda(), 0), ember.cumsum(x, 0), rtol_of(dtype) * (10 if dtype.itemsize == 2 else 1))
    y = ember.randn(3, 20_000, 2).to(dtype)  # inner > 1, block per column
    close(ember.cumsum(y.cuda(), 1), ember.cumsum(y, 1), rtol_of(dtype) * (10 if dtype.itemsize == 2 else 1))


@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.uint8])
def test_cumsum_long_integer_exact(dtype):
    ember.manual_seed(5)
    x = ember.randint(0, 100, (1_000_000,)).to(dtype)
    np.testing.assert_array_equal(as_np(ember.cumsum(x.cuda(), 0)), as_np(ember.cumsum(x, 0)))
    y = ember.randint(-5, 6, (7, 3000)).to(dtype)
    np.testing.assert_array_equal(as_np(ember.cumsum(y.cuda(), 1)), as_np(ember.cumsum(y, 1)))
    big = ember.full((200_000,), 2**40, dtype=ember.int64)
    np.testing.assert_array_equal(as_np(ember.cumsum(big.cuda(), 0)), as_np(ember.cumsum(big, 0)))


def test_cumsum_many_rows():
    ember.manual_seed(7)
    x = ember.randn(17_000, 600)  # many long rows: a block per row
    close(ember.cumsum(x.cuda(), 1), ember.cumsum(x, 1), 1e-5)
    y = ember.randint(-3, 4, (600, 17_000))  # many columns along dim 0: a thread per column
    np.testing.assert_array_equal(as_np(ember.cumsum(y.cuda(), 0)), as_np(ember.cumsum(y, 0)))


def test_cumsum_gradient_long():
    x = ember.randn(300_000, dtype=ember.float64, requires_grad=True)
    g = x.detach().cuda().requires_grad_()
    w = ember.randn(300_000, dtype=ember.float64)
    (ember.cumsum(x, 0) * w).sum().backward()
    (ember.cumsum(g, 0) * w.cuda()).sum().backward()
    close(g.grad, x.grad, 1e-9)


def test_nonzero_long_mask():
    ember.manual_seed(6)
    x = (ember.rand(3_000_000) < 0.3).to(ember.float32)
    got = ember.nonzero(x.cuda())
    want = ember.nonzero(x)
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
    m = ember.rand(2000, 3000) < 0.01
    np.testing.assert_array_equal(ember.nonzero(m.cuda()).cpu().numpy(), ember.nonzero(m).numpy())


# Folds over a wide inner axis (inner >= 16: tiles of adjacent columns, chunked
# when they are few), and 16-bit sums and means read as they are.
WIDE = [((8192, 768), (0,)), ((4, 3000, 40), (1,)), ((2, 5, 17), (1,)), ((6, 1000, 33), (0, 1)), ((300, 16), (0,))]


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.float16, ember.bfloat16])
@pytest.mark.parametrize("shape,dims", WIDE)
def test_folds_over_a_wide_inner_axis(dtype, shape, dims):
    ember.manual_seed(8)
    x = ember.randn(*shape).to(dtype)
    x.view(-1)[123] = float("nan")  # one column's NaN reaches its result only
    g = x.cuda()
    rtol = rtol_of(dtype) * (10 if dtype.itemsize == 2 else 1)
    for op in [ember.sum, ember.mean, ember.amax, ember.amin]:
        got, want = op(g, dims), op(x, dims)
        assert got.dtype == want.dtype == dtype, op.__name__
        close(got, want, rtol)
    close(ember.sum(g, dims, dtype=ember.float32), ember.sum(x, dims, dtype=ember.float32), rtol_of(ember.float32) * 10)
    close(ember.any(g > 2, dims[0]), ember.any(x > 2, dims[0]), 0)
    close(ember.all(g > -3, dims[0]), ember.all(x > -3, dims[0]), 0)
    close(ember.prod(1 + g / 100, dims[0]), ember.prod(1 + x / 100, dims[0]), rtol)


@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.uint8])
def test_integer_folds_over_a_wide_inner_axis_exact(dtype):
    x = ember.randint(0, 50, (5000, 70)).to(dtype)
    for op in [ember.sum, ember.amax, ember.amin]:
        np.testing.assert_array_equal(as_np(op(x.cuda(), (0,))), as_np(op(x, (0,))))


def test_bias_gradient_under_autocast():
    # A linear layer's bias gradient is a sum of the bfloat16 output gradient
    # over the batch: the 16-bit tiled path. Each output element gets its own
    # gradient (a random weight), so each bias gradient is a sum of 8,192
    # different values, about 90 in size.
    ember.manual_seed(9)
    layer = ember.nn.Linear(64, 768)
    x = ember.randn(8, 1024, 64)
    weights = ember.randn(8, 1024, 768)
    gpu = ember.nn.Linear(64, 768).cuda()
    gpu.load_state_dict(layer.state_dict())
    with ember.autocast("cuda", dtype=ember.bfloat16):
        (gpu(x.cuda()).float() * weights.cuda()).sum().backward()
    with ember.autocast("cpu", dtype=ember.bfloat16):
        (layer(x).float() * weights).sum().backward()
    assert gpu.bias.grad.dtype == ember.float32
    assert layer.bias.grad.abs().mean().item() > 10
    close(gpu.bias.grad, layer.bias.grad, 1e-2)
