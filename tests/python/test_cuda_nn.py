"""The nn-side ops on CUDA against the CPU path, forward and backward:
the matmul family through cuBLAS (mm, bmm, matmul with broadcasting, addmm,
linear) in float32 (full precision and TF32), float64, float16 and bfloat16.

Every test needs a CUDA GPU and skips, saying why, without one. The CPU is the
reference: inputs are made on the CPU, copied to the GPU, and the results (and
gradients) copied back and compared with tolerances by dtype.
"""
import numpy as np
import pytest

import ember
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

# (rtol, atol) of a CUDA result against the CPU's float32/float64 result.
TOL = {
    ember.float32: (1e-5, 1e-5),
    ember.float64: (1e-12, 1e-12),
    ember.float16: (1e-2, 1e-2),
    ember.bfloat16: (3e-2, 3e-2),
}
TF32_TOL = (5e-3, 5e-3)
DTYPES = [ember.float32, ember.float64, ember.float16, ember.bfloat16]


@pytest.fixture(autouse=True)
def full_float32_precision():
    before = ember.get_float32_matmul_precision()
    ember.set_float32_matmul_precision("highest")
    yield
    ember.set_float32_matmul_precision(before)


def as_np(t):
    return t.detach().cpu().to(ember.float64).numpy()


def make(shape, seed, dtype):
    rng = np.random.default_rng(seed)
    # Values exactly representable in every dtype, so both backends start equal.
    x = np.round(rng.standard_normal(shape) * 8) / 8
    return ember.tensor(x, dtype=dtype)


def close(got, want, tol):
    rtol, atol = tol
    np.testing.assert_allclose(as_np(got), as_np(want), rtol=rtol, atol=atol)


def reference_dtype(dtype):
    # The CPU computes half types in float32 and rounds once; so does cuBLAS.
    return dtype


def run_both(fn, shapes, dtype, grad=True, tol=None, seed=0):
    """fn(*tensors) on the CPU and on CUDA; compares outputs and input grads."""
    tol = tol or TOL[dtype]
    cpu_in = [make(s, seed + i, dtype) for i, s in enumerate(shapes)]
    gpu_in = [t.cuda() for t in cpu_in]
    if grad:
        for t in cpu_in + gpu_in:
            t.requires_grad_(True)
    out_cpu, out_gpu = fn(*cpu_in), fn(*gpu_in)
    assert out_gpu.is_cuda and out_gpu.dtype == out_cpu.dtype and out_gpu.shape == out_cpu.shape
    close(out_gpu, out_cpu, tol)
    if grad:
        g = make(tuple(out_cpu.shape), seed + 100, dtype)
        out_cpu.backward(g)
        out_gpu.backward(g.cuda())
        for tc, tg in zip(cpu_in, gpu_in):
            assert tg.grad is not None and tg.grad.is_cuda
            close(tg.grad, tc.grad, tol)


# ---- matmul family --------------------------------------------------------------------------

PRODUCTS = [
    ("mm", lambda a, b: ember.mm(a, b), [(5, 7), (7, 3)]),
    ("mm_square", lambda a, b: a @ b, [(64, 64), (64, 64)]),
    ("mm_transposed_a", lambda a, b: ember.mm(a.t(), b), [(7, 5), (7, 3)]),
    ("mm_transposed_b", lambda a, b: ember.mm(a, b.t()), [(5, 7), (3, 7)]),
    ("mm_both_transposed", lambda a, b: ember.mm(a.t(), b.t()), [(7, 5), (3, 7)]),
    ("mm_sliced", lambda a, b: ember.mm(a[:, ::2], b[::2]), [(5, 14), (14, 3)]),
    ("mm_row", lambda a, b: ember.mm(a, b), [(1, 9), (9, 4)]),
    ("mm_column", lambda a, b: ember.mm(a, b), [(4, 9), (9, 1)]),
    ("bmm", lambda a, b: ember.bmm(a, b), [(3, 5, 7), (3, 7, 4)]),
    ("bmm_transposed", lambda a, b: ember.bmm(a.transpose(1, 2), b), [(3, 7, 5), (3, 7, 4)]),
    ("bmm_batch_last", lambda a, b: ember.bmm(a.permute(2, 0, 1), b), [(5, 7, 3), (3, 7, 4)]),
    ("matmul_vv", lambda a, b: ember.matmul(a, b), [(6,), (6,)]),
    ("matmul_mv", lambda a, b: ember.matmul(a, b), [(4, 6), (6,)]),
    ("matmul_vm", lambda a, b: ember.matmul(a, b), [(6,), (6, 4)]),
    ("matmul_batched_mat", lambda a, b: ember.matmul(a, b), [(2, 3, 5, 6), (6, 4)]),
    ("matmul_mat_batched", lambda a, b: ember.matmul(a, b), [(5, 6), (2, 6, 4)]),
    # batch dims [2, 1] x [1, 3]: no single stride per operand (pointer-array path)
    ("matmul_cross_broadcast", lambda a, b: ember.matmul(a, b), [(2, 1, 5, 6), (1, 3, 6, 4)]),
    ("addmm", lambda c, a, b: ember.addmm(c, a, b), [(5, 3), (5, 7), (7, 3)]),
    ("addmm_row_bias", lambda c, a, b: ember.addmm(c, a, b), [(3,), (5, 7), (7, 3)]),
    ("addmm_scaled", lambda c, a, b: ember.addmm(c, a, b, beta=0.5, alpha=-2.0), [(5, 3), (5, 7), (7, 3)]),
    ("linear", lambda x, w, b: ember.nn.functional.linear(x, w, b), [(8, 6), (4, 6), (4,)]),
    ("linear_3d", lambda x, w, b: ember.nn.functional.linear(x, w, b), [(2, 8, 6), (4, 6), (4,)]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,fn,shapes", PRODUCTS, ids=[p[0] for p in PRODUCTS])
def test_products_match_cpu(name, fn, shapes, dtype):
    run_both(fn, shapes, dtype)


def test_large_float32_product_is_exact_enough_without_tf32():
    a, b = make((256, 512), 1, ember.float32), make((512, 128), 2, ember.float32)
    close((a.cuda() @ b.cuda()), a @ b, (1e-5, 1e-4))


@pytest.mark.parametrize("precision", ["high", "medium"])
def test_tf32_products_are_close(precision):
    ember.set_float32_matmul_precision(precision)
    a, b = make((128, 256), 3, ember.float32), make((256, 64), 4, ember.float32)
    close(a.cuda() @ b.cuda(), a @ b, (TF32_TOL[0], 0.05))


def test_allow_tf32_switch_changes_the_gpu_result():
    # Values with more mantissa bits than TF32's 10 differ once TF32 is on.
    rng = np.random.default_rng(5)
    a = ember.tensor(rng.standard_normal((64, 256)), dtype=ember.float32).cuda()
    b = ember.tensor(rng.standard_normal((256, 64)), dtype=ember.float32).cuda()
    ember.backends.cuda.matmul.allow_tf32 = False
    exact = as_np(a @ b)
    ember.backends.cuda.matmul.allow_tf32 = True
    fast = as_np(a @ b)
    ember.backends.cuda.matmul.allow_tf32 = False
    assert not np.array_equal(exact, fast)
    np.testing.assert_allclose(fast, exact, rtol=1e-2, atol=5e-2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_empty_inner_dim_gives_zeros(dtype):
    a, b = ember.ones(4, 0, dtype=dtype).cuda(), ember.ones(0, 3, dtype=dtype).cuda()
    out = a @ b
    assert out.shape == (4, 3) and (as_np(out) == 0).all()
    c = ember.full((4, 3), 2.0, dtype=dtype).cuda()
    out = ember.addmm(c, a, b, beta=0.5)
    assert (as_np(out) == 1.0).all()


def test_empty_outputs():
    assert (ember.ones(0, 5).cuda() @ ember.ones(5, 3).cuda()).shape == (0, 3)
    assert ember.bmm(ember.ones(0, 2, 5).cuda(), ember.ones(0, 5, 3).cuda()).shape == (0, 2, 3)


# name -> (what the message starts with, the call on integer CUDA operands made by `t(*shape)`)
INTEGER_PRODUCTS = {
    "matmul": ("matmul", lambda t: ember.matmul(t(2, 2, 3), t(3, 4))),
    "mm": ("mm", lambda t: ember.mm(t(2, 3), t(3, 4))),
    "bmm": ("bmm", lambda t: ember.bmm(t(2, 2, 3), t(2, 3, 4))),
    "mv": ("mv", lambda t: ember.mv(t(2, 3), t(3))),
    "dot": ("dot", lambda t: ember.dot(t(3), t(3))),
    "addmm": ("addmm", lambda t: ember.addmm(t(2, 4), t(2, 3), t(3, 4))),
    "inner": ("inner: tensordot: mm", lambda t: ember.inner(t(2, 3), t(4, 3))),
    "tensordot": ("tensordot: mm", lambda t: ember.tensordot(t(2, 3), t(3, 4), dims=1)),
    "einsum": ("matmul", lambda t: ember.einsum("ij,jk", t(2, 3), t(3, 4))),  # einsum is composed of matmul
}


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
@pytest.mark.parametrize("name", sorted(INTEGER_PRODUCTS))
def test_integer_products_are_refused_on_cuda(name, dtype):
    """cuBLAS has no integer GEMM: as PyTorch, the matmul family refuses
    integer CUDA tensors, naming the op and the dtype (the CPU computes them)."""
    op, call = INTEGER_PRODUCTS[name]

    def t(*shape):
        return ember.ones(*shape, dtype=getattr(ember, dtype)).cuda()
    with pytest.raises(NotImplementedError, match=f"^{op}: not implemented for {dtype} tensors on CUDA"):
        call(t)


def test_mixed_devices_are_refused():
    with pytest.raises(RuntimeError, match="matmul"):
        ember.matmul(ember.ones(2, 2).cuda(), ember.ones(2, 2))


def test_result_is_on_the_inputs_device_and_stream_ordered():
    s = ember.cuda.Stream()
    a, b = make((32, 32), 7, ember.float32).cuda(), make((32, 32), 8, ember.float32).cuda()
    with ember.cuda.stream(s):
        out = a @ b
    s.synchronize()
    close(out, a.cpu() @ b.cpu(), TOL[ember.float32])


def test_linear_layer_trains_on_cuda():
    ember.manual_seed(0)
    layer = ember.nn.Linear(6, 3)
    x = make((16, 6), 9, ember.float32)
    ref = layer(x).sum()
    ref.backward()
    want = layer.weight.grad.clone()
    layer.zero_grad()
    layer.cuda()
    layer(x.cuda()).sum().backward()
    close(layer.weight.grad, want, TOL[ember.float32])


# ---- norms ----------------------------------------------------------------------------------

NORM_TOL = {
    ember.float32: (1e-4, 1e-4),
    ember.float64: (1e-10, 1e-10),
    ember.float16: (2e-2, 2e-2),
    ember.bfloat16: (5e-2, 5e-2),
}
F = ember.nn.functional

NORMS = [
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b), [(4, 7, 33), (33,), (33,)]),
    ("layer_norm_2d_shape", lambda x, w, b: F.layer_norm(x, tuple(x.shape[-2:]), w.reshape(5, 6),
                                                         b.reshape(5, 6)), [(3, 5, 6), (30,), (30,)]),
    ("layer_norm_long_row", lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b), [(3, 2500), (2500,), (2500,)]),
    ("layer_norm_no_affine", lambda x: F.layer_norm(x, (x.shape[-1],)), [(6, 17)]),
    ("layer_norm_transposed", lambda x: F.layer_norm(x.t(), (x.shape[0],)), [(9, 4)]),
    ("rms_norm", lambda x, w: F.rms_norm(x, (x.shape[-1],), w), [(5, 40), (40,)]),
    ("rms_norm_no_weight", lambda x: F.rms_norm(x, (x.shape[-1],)), [(2, 3, 8)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [(3, 4, 5, 5), (4,), (4,)]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,fn,shapes", NORMS, ids=[n[0] for n in NORMS])
def test_norms_match_cpu(name, fn, shapes, dtype):
    run_both(fn, shapes, dtype, tol=NORM_TOL[dtype])


def test_norm_weight_on_another_device_is_refused():
    x = ember.ones(2, 4).cuda()
    with pytest.raises(RuntimeError, match="layer_norm: expected weight on cuda:0"):
        F.layer_norm(x, (4,), ember.ones(4))


# ---- losses ---------------------------------------------------------------------------------

LOSS_TOL = {
    ember.float32: (1e-5, 1e-5),
    ember.float64: (1e-10, 1e-10),
    ember.float16: (1e-2, 1e-2),
    ember.bfloat16: (3e-2, 3e-2),
}


def class_targets(shape, classes, seed, ignore=None):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, classes, size=shape)
    if ignore is not None:
        t.flat[::3] = ignore
    return ember.tensor(t, dtype=ember.int64)


def run_cross_entropy(shape, dtype, target_shape, classes, weight=False, ignore_index=-100, reduction="mean",
                      ignore=None):
    x = make(shape, 11, dtype)
    t = class_targets(target_shape, classes, 12, ignore)
    w = make((classes,), 13, ember.float32).abs() + 0.5 if weight else None
    xc, xg = x.clone().requires_grad_(True), x.cuda().requires_grad_(True)
    kw = dict(ignore_index=ignore_index, reduction=reduction)
    out_cpu = F.cross_entropy(xc, t, weight=w.to(dtype) if weight else None, **kw)
    out_gpu = F.cross_entropy(xg, t.cuda(), weight=w.to(dtype).cuda() if weight else None, **kw)
    assert out_gpu.is_cuda and out_gpu.dtype == out_cpu.dtype and out_gpu.shape == out_cpu.shape
    close(out_gpu, out_cpu, LOSS_TOL[dtype])
    g = make(tuple(out_cpu.shape), 14, dtype)
    out_cpu.backward(g)
    out_gpu.backward(g.cuda())
    close(xg.grad, xc.grad, LOSS_TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_matches_cpu(dtype, reduction):
    run_cross_entropy((8, 10), dtype, (8,), 10, reduction=reduction)


@pytest.mark.parametrize("dtype", [ember.float32, ember.bfloat16], ids=str)
def test_cross_entropy_weight_and_ignore_index(dtype):
    run_cross_entropy((9, 6), dtype, (9,), 6, weight=True, ignore_index=2)
    run_cross_entropy((9, 6), dtype, (9,), 6, ignore_index=-1, ignore=-1)


def test_cross_entropy_spatial_and_many_classes():
    run_cross_entropy((2, 5, 3, 4), ember.float32, (2, 3, 4), 5)
    run_cross_entropy((4, 3000), ember.float32, (4,), 3000)  # more classes than threads
    run_cross_entropy((7,), ember.float32, (), 7)


def test_cross_entropy_target_out_of_range_is_an_index_error():
    with pytest.raises(IndexError, match="cross_entropy: target 5 is out of bounds"):
        F.cross_entropy(ember.zeros(2, 5).cuda(), ember.tensor([1, 5]).cuda())


def test_cross_entropy_target_on_another_device_is_refused():
    with pytest.raises(RuntimeError, match="cross_entropy: expected input and target on the same device"):
        F.cross_entropy(ember.zeros(2, 5).cuda(), ember.tensor([1, 2]))


# ---- embedding ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_embedding_matches_cpu(dtype):
    weight = make((10, 6), 21, dtype)
    idx = ember.tensor([[1, 3, 3], [9, 0, 3]])  # repeated rows accumulate in the backward
    wc, wg = weight.clone().requires_grad_(True), weight.cuda().requires_grad_(True)
    out_cpu, out_gpu = F.embedding(idx, wc), F.embedding(idx.cuda(), wg)
    assert out_gpu.is_cuda and out_gpu.shape == (2, 3, 6)
    close(out_gpu, out_cpu, TOL[dtype])
    g = make((2, 3, 6), 22, dtype)
    out_cpu.backward(g)
    out_gpu.backward(g.cuda())
    close(wg.grad, wc.grad, TOL[dtype])


def test_embedding_padding_idx_gets_no_gradient():
    weight = make((5, 4), 23, ember.float32).cuda().requires_grad_(True)
    F.embedding(ember.tensor([0, 2, 2]).cuda(), weight, padding_idx=2).sum().backward()
    grad = as_np(weight.grad)
    assert (grad[2] == 0).all() and (grad[0] == 1).all()


def test_embedding_index_out_of_range_is_an_index_error():
    with pytest.raises(IndexError, match="embedding: index 7 is out of range"):
        F.embedding(ember.tensor([7]).cuda(), ember.zeros(5, 2).cuda())


# ---- convolutions (cuDNN) -------------------------------------------------------------------

CUDNN = ember.backends.cudnn.is_available()
needs_cudnn = pytest.mark.skipif(not CUDNN, reason="needs cuDNN")

CONVS = [
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b), [(2, 3, 9, 9), (4, 3, 3, 3), (4,)]),
    ("conv2d_stride_pad", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [(2, 3, 9, 8), (5, 3, 3, 3), (5,)]),
    ("conv2d_dilation", lambda x, w: F.conv2d(x, w, dilation=2, padding=2), [(1, 2, 10, 10), (3, 2, 3, 3)]),
    ("conv2d_groups", lambda x, w, b: F.conv2d(x, w, b, groups=2), [(2, 4, 7, 7), (6, 2, 3, 3), (6,)]),
    ("conv2d_1x1", lambda x, w: F.conv2d(x, w), [(3, 8, 5, 5), (4, 8, 1, 1)]),
    ("conv2d_unbatched", lambda x, w: F.conv2d(x, w, padding=1), [(3, 6, 6), (2, 3, 3, 3)]),
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b, padding=1), [(2, 3, 11), (4, 3, 3), (4,)]),
    ("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
     [(2, 4, 5, 5), (4, 3, 3, 3), (3,)]),
]


@needs_cudnn
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,fn,shapes", CONVS, ids=[c[0] for c in CONVS])
def test_convolutions_match_cpu(name, fn, shapes, dtype):
    tol = {ember.float32: (1e-4, 1e-4), ember.float64: (1e-10, 1e-10)}.get(dtype, TOL[dtype])
    run_both(fn, shapes, dtype, tol=tol)


@needs_cudnn
def test_conv_layer_trains_on_cuda():
    ember.manual_seed(0)
    conv = ember.nn.Conv2d(3, 4, 3, padding=1)
    x = make((2, 3, 6, 6), 31, ember.float32)
    conv(x).square().sum().backward()
    want = conv.weight.grad.clone()
    conv.zero_grad()
    conv.cuda()
    conv(x.cuda()).square().sum().backward()
    close(conv.weight.grad, want, (1e-4, 1e-3))


# ---- pooling --------------------------------------------------------------------------------

POOLS = [
    ("max_pool2d", lambda x: F.max_pool2d(x, 2), [(2, 3, 8, 8)]),
    ("max_pool2d_overlap_pad", lambda x: F.max_pool2d(x, 3, stride=2, padding=1), [(2, 2, 9, 7)]),
    ("max_pool2d_dilation_ceil", lambda x: F.max_pool2d(x, 2, stride=2, dilation=2, ceil_mode=True), [(1, 2, 9, 9)]),
    ("max_pool1d", lambda x: F.max_pool1d(x, 3, stride=2), [(2, 3, 11)]),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (3, 2)), [(2, 2, 7, 5)]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 2), [(2, 3, 8, 8)]),
    ("avg_pool2d_pad_exclude", lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
     [(2, 2, 9, 7)]),
    ("avg_pool2d_divisor", lambda x: F.avg_pool2d(x, 3, stride=1, padding=1, divisor_override=5), [(1, 2, 6, 6)]),
    ("avg_pool1d", lambda x: F.avg_pool1d(x, 3, stride=2), [(2, 3, 11)]),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 2)), [(2, 2, 7, 5)]),
    ("adaptive_avg_pool2d_global", lambda x: F.adaptive_avg_pool2d(x, 1), [(2, 4, 5, 5)]),
]


def distinct_values(shape, seed, dtype):
    # Distinct values (a permutation of multiples of 1/8) so max ties cannot pick different cells.
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return ember.tensor((rng.permutation(n) - n / 2).reshape(shape) / 8, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name,fn,shapes", POOLS, ids=[p[0] for p in POOLS])
def test_pools_match_cpu(name, fn, shapes, dtype):
    x = distinct_values(shapes[0], 41, dtype)
    if dtype == ember.float16 or dtype == ember.bfloat16:
        x = make(shapes[0], 41, dtype)  # few representable distinct values: ties possible, compare values only
    xc, xg = x.clone().requires_grad_(True), x.cuda().requires_grad_(True)
    out_cpu, out_gpu = fn(xc), fn(xg)
    close(out_gpu, out_cpu, TOL[dtype])
    if dtype in (ember.float32, ember.float64):
        g = make(tuple(out_cpu.shape), 42, dtype)
        out_cpu.backward(g)
        out_gpu.backward(g.cuda())
        close(xg.grad, xc.grad, TOL[dtype])


def test_max_pool_indices_match_cpu():
    x = distinct_values((2, 3, 9, 9), 43, ember.float32)
    _, idx_cpu = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    _, idx_gpu = F.max_pool2d(x.cuda(), 3, stride=2, padding=1, return_indices=True)
    assert idx_gpu.is_cuda and (idx_gpu.cpu().numpy() == idx_cpu.numpy()).all()


# ---- batch norm -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16], ids=str)
def test_batch_norm_training_matches_cpu(dtype):
    run_both(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(4, 3, 5, 5), (3,), (3,)], dtype,
             tol=NORM_TOL[dtype])


def test_batch_norm_updates_running_stats_like_cpu():
    x = make((6, 4, 3), 51, ember.float32)
    rm, rv = ember.zeros(4), ember.ones(4)
    rm_g, rv_g = rm.cuda(), rv.cuda()
    out_cpu = F.batch_norm(x, rm, rv, training=True, momentum=0.2)
    out_gpu = F.batch_norm(x.cuda(), rm_g, rv_g, training=True, momentum=0.2)
    close(out_gpu, out_cpu, NORM_TOL[ember.float32])
    close(rm_g, rm, NORM_TOL[ember.float32])
    close(rv_g, rv, NORM_TOL[ember.float32])


def test_batch_norm_eval_matches_cpu():
    rm, rv = make((3,), 52, ember.float32), make((3,), 53, ember.float32).abs() + 0.5
    run_both(lambda x, w, b: F.batch_norm(x, rm.to(x.device), rv.to(x.device), w, b, training=False),
             [(4, 3, 6), (3,), (3,)], ember.float32, tol=NORM_TOL[ember.float32])


# ---- fused optimizers -----------------------------------------------------------------------

OPTIMIZERS = [
    ("sgd", lambda ps: ember.optim.SGD(ps, lr=0.1)),
    ("sgd_momentum_wd", lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01)),
    ("sgd_nesterov", lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True)),
    ("adam", lambda ps: ember.optim.Adam(ps, lr=0.01)),
    ("adam_amsgrad_wd", lambda ps: ember.optim.Adam(ps, lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("adamw", lambda ps: ember.optim.AdamW(ps, lr=0.01, weight_decay=0.1)),
]


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=str)
@pytest.mark.parametrize("name,make_opt", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_optimizer_steps_match_cpu(name, make_opt, dtype):
    # A large parameter spans several chunks; a small one shares the launch.
    shapes = [(300, 500), (7,), (3, 4)]
    cpu_params = [make(s, 60 + i, dtype).requires_grad_(True) for i, s in enumerate(shapes)]
    gpu_params = [p.detach().cuda().requires_grad_(True) for p in cpu_params]
    opt_cpu, opt_gpu = make_opt(cpu_params), make_opt(gpu_params)
    for step in range(3):
        for pc, pg, s in zip(cpu_params, gpu_params, shapes):
            g = make(s, 100 * step + len(s), dtype)
            pc.grad, pg.grad = g, g.cuda()
        opt_cpu.step()
        opt_gpu.step()
    tol = (1e-5, 1e-6) if dtype == ember.float32 else (1e-12, 1e-12)
    for pc, pg in zip(cpu_params, gpu_params):
        assert pg.is_cuda
        close(pg, pc, tol)


def test_optimizer_refuses_mixed_devices():
    a = ember.zeros(2, requires_grad=True)
    b = ember.zeros(2).cuda().requires_grad_(True)
    a.grad, b.grad = ember.ones(2), ember.ones(2).cuda()
    with pytest.raises(NotImplementedError, match="separate optimizers"):
        ember.optim.SGD([a, b], lr=0.1).step()


# ---- nll_loss and label smoothing -----------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_matches_cpu(dtype, reduction):
    logp = make((8, 5), 71, dtype)
    t = class_targets((8,), 5, 72, ignore=1)
    w = make((5,), 73, ember.float32).abs() + 0.5
    for weight in (None, w.to(dtype)):
        xc, xg = logp.clone().requires_grad_(True), logp.cuda().requires_grad_(True)
        out_cpu = F.nll_loss(xc, t, weight=weight, ignore_index=1, reduction=reduction)
        out_gpu = F.nll_loss(xg, t.cuda(), weight=None if weight is None else weight.cuda(), ignore_index=1,
                             reduction=reduction)
        close(out_gpu, out_cpu, LOSS_TOL[dtype])
        g = make(tuple(out_cpu.shape), 74, dtype)
        out_cpu.backward(g)
        out_gpu.backward(g.cuda())
        close(xg.grad, xc.grad, LOSS_TOL[dtype])


def test_nll_loss_spatial_matches_cpu():
    logp = make((2, 4, 3, 3), 75, ember.float32)
    t = class_targets((2, 3, 3), 4, 76)
    close(F.nll_loss(logp.cuda(), t.cuda()), F.nll_loss(logp, t), LOSS_TOL[ember.float32])


def test_cross_entropy_label_smoothing_matches_cpu():
    x = make((6, 5), 77, ember.float32)
    t = class_targets((6,), 5, 78)
    xc, xg = x.clone().requires_grad_(True), x.cuda().requires_grad_(True)
    out_cpu = F.cross_entropy(xc, t, label_smoothing=0.1)
    out_gpu = F.cross_entropy(xg, t.cuda(), label_smoothing=0.1)
    close(out_gpu, out_cpu, LOSS_TOL[ember.float32])
    out_cpu.backward()
    out_gpu.backward()
    close(xg.grad, xc.grad, LOSS_TOL[ember.float32])
