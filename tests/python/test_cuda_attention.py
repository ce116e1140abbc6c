"""The fused (flash) scaled_dot_product_attention kernel on CUDA against the CPU (float64 math
path on the same half-precision inputs) and against the CUDA math path: forward and the three
gradients, causal and not, L == S, L > S, L < S, lengths that are not multiples of the 64-row
tiles, head sizes 8..128, float16 and bfloat16, several batch*heads, for both kernel sets
(mma.sync, and wmma with EMBER_FLASH_KERNELS=wmma); that the fused path is
really taken (its grad_fn) and that the switches and unsupported arguments fall back; the W3
shape (8, 12, 1024, 64) in bfloat16 once, with its memory.

Every test needs a CUDA GPU (compute capability 8.0+ for the fused kernel) and skips, saying
why, without one.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare the fused kernel with references, not ember with numpy

FLASH = "ScaledDotProductFlashAttentionBackward0"
# Error allowed relative to the largest reference magnitude: P and dS are rounded to the input
# type before their tensor-core products, as in FlashAttention-2.
TOL = {ember.float16: 1e-2, ember.bfloat16: 3e-2}
# The same kernel on the same values in another layout: only dQ's float32 atomics may add in
# another order, which moves its rounding to the input type by about one unit in the last place.
SAME_KERNEL_TOL = {ember.float16: 2e-3, ember.bfloat16: 2e-2}


@pytest.fixture(autouse=True)
def switches_restored():
    flash, math_ = ember.backends.cuda.flash_sdp_enabled(), ember.backends.cuda.math_sdp_enabled()
    ember.backends.cuda.enable_flash_sdp(True)
    ember.backends.cuda.enable_math_sdp(True)
    yield
    ember.backends.cuda.enable_flash_sdp(flash)
    ember.backends.cuda.enable_math_sdp(math_)


def make(shape, seed, dtype):
    # Multiples of 1/8 in [-2, 2]: exact in float16 and bfloat16, so every path starts equal.
    rng = np.random.default_rng(seed)
    x = np.clip(np.round(rng.standard_normal(shape) * 8) / 8, -2, 2)
    return ember.tensor(x, dtype=ember.float64).to(dtype)


def as_np(t):
    return t.detach().cpu().to(ember.float64).numpy()


def close(got, want, tol, what):
    g, w = as_np(got), as_np(want)
    assert g.shape == w.shape, what
    assert np.all(np.isfinite(g)), f"{what}: non-finite values"
    scale = max(np.abs(w).max(), 1e-3)
    err = np.abs(g - w).max()
    assert err <= tol * scale, f"{what}: max error {err:.4g} > {tol} * {scale:.4g}"


def run(q, k, v, grad_out, **kw):
    """Output and (dq, dk, dv) of sdpa on fresh leaves copied from q, k, v."""
    leaves = [t.detach().clone().requires_grad_(True) for t in (q, k, v)]
    out = F.scaled_dot_product_attention(*leaves, **kw)
    out.backward(grad_out)
    return out, [t.grad for t in leaves]


def leaf_views(*pairs):
    """(tensor, view function) pairs -> views of fresh leaves (requiring grad) holding the tensors."""
    return [f(t.detach().clone().requires_grad_(True)) for t, f in pairs]


def run_in_place(q, k, v, grad_out, **kw):
    """Output, gradients w.r.t. q, k, v themselves and the forward's peak extra memory: unlike
    run(), which clones its inputs (contiguously), the views reach the fused kernel as they are."""
    ember.cuda.synchronize()
    ember.cuda.reset_peak_memory_stats()
    before = ember.cuda.memory_allocated()
    out = F.scaled_dot_product_attention(q, k, v, **kw)
    ember.cuda.synchronize()
    extra = ember.cuda.max_memory_allocated() - before
    return out, list(ember.autograd.grad([out], [q, k, v], [grad_out])), extra


def cpu_reference(q, k, v, grad_out, **kw):
    to64 = [t.detach().cpu().to(ember.float64) for t in (q, k, v)]
    return run(*to64, grad_out.cpu().to(ember.float64), **kw)


def check_fused(shape_q, shape_kv, dtype, causal, e_v=None, seed=0, **kw):
    e_v = e_v or shape_kv[-1]
    q = make(shape_q, seed, dtype).cuda()
    k = make(shape_kv, seed + 1, dtype).cuda()
    v = make(tuple(shape_kv[:-1]) + (e_v,), seed + 2, dtype).cuda()
    g = make(tuple(shape_q[:-1]) + (e_v,), seed + 3, dtype).cuda()
    out, grads = run(q, k, v, g, is_causal=causal, **kw)
    assert out.is_cuda and out.dtype == dtype
    assert out.grad_fn.name() == FLASH, "the fused path was not taken"
    ref_out, ref_grads = cpu_reference(q, k, v, g, is_causal=causal, **kw)
    tol = TOL[dtype]
    close(out, ref_out, tol, "output vs CPU float64")
    for name, got, want in zip("qkv", grads, ref_grads):
        assert got.is_cuda and got.dtype == dtype and got.shape == want.shape
        close(got, want, 2 * tol, f"d{name} vs CPU float64")
    # The CUDA math path (flash off) on the same inputs.
    ember.backends.cuda.enable_flash_sdp(False)
    try:
        math_out, math_grads = run(q, k, v, g, is_causal=causal, **kw)
    finally:
        ember.backends.cuda.enable_flash_sdp(True)
    close(out, math_out, tol, "output vs CUDA math path")
    for name, got, want in zip("qkv", grads, math_grads):
        close(got, want, 2 * tol, f"d{name} vs CUDA math path")


# The kernel sets cuda/attention.cu picks from: the mma.sync ones (default) and, with
# EMBER_FLASH_KERNELS=wmma, the wmma ones; both are held to the same references.
KERNELS = ["mma", "wmma"]


@pytest.fixture
def kernels(request, monkeypatch):
    if request.param == "wmma":
        monkeypatch.setenv("EMBER_FLASH_KERNELS", "wmma")
    else:
        monkeypatch.delenv("EMBER_FLASH_KERNELS", raising=False)
    return request.param


@pytest.mark.parametrize("kernels", KERNELS, indirect=True)
@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(64, 64), (100, 100), (130, 70), (70, 130), (1, 1), (5, 200)])
def test_fused_matches_references_head_64(kernels, dtype, causal, L, S):
    check_fused((2, 3, L, 64), (2, 3, S, 64), dtype, causal, seed=L + S)


@pytest.mark.parametrize("kernels", KERNELS, indirect=True)
@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
@pytest.mark.parametrize("E", [8, 32, 40, 72, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_fused_head_sizes(kernels, dtype, E, causal):
    check_fused((1, 2, 129, E), (1, 2, 97, E), dtype, causal, seed=E)


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_fused_three_and_two_dim_inputs_and_custom_scale(dtype):
    check_fused((4, 65, 32), (4, 80, 32), dtype, True, scale=0.3)
    check_fused((33, 16), (47, 16), dtype, False)


def test_fused_gqa():
    check_fused((2, 6, 70, 64), (2, 2, 70, 64), ember.bfloat16, True, enable_gqa=True)


def test_fused_non_contiguous_inputs():
    dtype = ember.bfloat16
    # [B, L, H, E] viewed as [B, H, L, E]; views of leaves, so that they reach the kernel as views.
    q, k, v = leaf_views(*((make((2, 90, 3, 64), s, dtype).cuda(), lambda t: t.transpose(1, 2)) for s in (1, 2, 3)))
    g = make((2, 3, 90, 64), 4, dtype).cuda()
    assert not q.is_contiguous()
    out, grads, _ = run_in_place(q, k, v, g, is_causal=True)
    ref_out, ref_grads = cpu_reference(q, k, v, g, is_causal=True)
    close(out, ref_out, TOL[dtype], "output")
    for got, want in zip(grads, ref_grads):
        close(got, want, 2 * TOL[dtype], "gradient")


def test_autocast_takes_the_fused_path():
    q, k, v = (make((2, 4, 50, 64), s, ember.float32).cuda().requires_grad_(True) for s in range(3))
    with ember.autocast("cuda", dtype=ember.bfloat16):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.dtype == ember.bfloat16 and out.grad_fn.name() == FLASH
    out.float().sum().backward()
    assert q.grad.dtype == ember.float32 and np.all(np.isfinite(as_np(q.grad)))


def test_unsupported_arguments_and_switches_fall_back():
    dt = ember.bfloat16
    q, k, v = (make((1, 2, 20, 64), s, dt).cuda().requires_grad_(True) for s in range(3))
    name = lambda out: out.grad_fn.name()  # noqa: E731
    assert name(F.scaled_dot_product_attention(q, k, v)) == FLASH
    assert name(F.scaled_dot_product_attention(q.float(), k.float(), v.float())) != FLASH
    assert name(F.scaled_dot_product_attention(q, k, v, attn_mask=ember.ones(20, 20, dtype=ember.bool,
                                                                             device="cuda"))) != FLASH
    assert name(F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)) != FLASH
    assert name(F.scaled_dot_product_attention(q[..., :12], k[..., :12], v[..., :12])) != FLASH  # E = 12
    assert name(F.scaled_dot_product_attention(q, k, v[..., :32])) != FLASH  # Ev != E
    ember.backends.cuda.enable_flash_sdp(False)
    assert name(F.scaled_dot_product_attention(q, k, v)) != FLASH
    assert "disabled" in ember._C._nn._flash_attention_blocker(q, k, v)
    ember.backends.cuda.enable_flash_sdp(True)
    ember.backends.cuda.enable_math_sdp(False)
    assert name(F.scaled_dot_product_attention(q, k, v, is_causal=True)) == FLASH  # math off: fused still runs
    with pytest.raises(RuntimeError, match="no available kernel.*attn_mask"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ember.zeros(20, 20, device="cuda"))


def test_double_backward_through_the_fused_node_raises():
    q, k, v = (make((1, 2, 20, 64), s, ember.float16).cuda().requires_grad_(True) for s in range(3))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.grad_fn.name() == FLASH
    (gq,) = ember.autograd.grad(out.float().sum(), [q], create_graph=True)
    with pytest.raises(RuntimeError, match=r"enable_flash_sdp\(False\)"):
        gq.float().sum().backward()


def test_w3_shape_bfloat16_and_memory():
    """GPT-2 124M's attention: batch 8, 12 heads, 1024 tokens, head size 64, causal, bfloat16."""
    dt = ember.bfloat16
    shape = (8, 12, 1024, 64)
    q, k, v, g = (make(shape, s, dt).cuda() for s in range(4))
    leaves = [t.detach().clone().requires_grad_(True) for t in (q, k, v)]
    # The 8 * 12 * 1024 * 1024 score matrix (192 MiB in bfloat16) must never exist: the forward
    # adds its output (12 MiB) and the logsumexp; the backward float32 dQ and the gradients.
    scores_bytes = 8 * 12 * 1024 * 1024 * 2
    ember.cuda.synchronize()
    ember.cuda.reset_peak_memory_stats()
    before = ember.cuda.memory_allocated()
    out = F.scaled_dot_product_attention(*leaves, is_causal=True)
    ember.cuda.synchronize()
    assert out.grad_fn.name() == FLASH
    assert ember.cuda.max_memory_allocated() - before < scores_bytes // 8
    out.backward(g)
    ember.cuda.synchronize()
    assert ember.cuda.max_memory_allocated() - before < scores_bytes
    ember.backends.cuda.enable_flash_sdp(False)
    math_out, math_grads = run(q, k, v, g, is_causal=True)
    close(out, math_out, TOL[dt], "W3 output vs CUDA math path")
    for name, got, want in zip("qkv", [t.grad for t in leaves], math_grads):
        close(got, want, 2 * TOL[dt], f"W3 d{name} vs CUDA math path")


# ---- strided inputs: the fused kernel reads q, k, v and grad_out where they are


def gpt_views(qkv, heads):
    """GPT-2's q, k, v: thirds of one [B, T, 3C] projection viewed as [B, H, T, D]."""
    B, T, C3 = qkv.shape
    C = C3 // 3
    return [t.view(B, T, heads, C // heads).transpose(1, 2) for t in qkv.split(C, dim=2)]


def contiguous_run(q, k, v, g, **kw):
    """The same attention on contiguous copies: the fused kernel's contiguous-input results."""
    return run(q.contiguous(), k.contiguous(), v.contiguous(), g.contiguous(), **kw)


def exactly_equal(got, want, what):
    assert np.array_equal(as_np(got), as_np(want)), f"{what}: differs from the contiguous-input result"


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_gpt_layout_matches_contiguous_inputs_and_the_cpu(dtype, causal):
    B, T, H, D = 2, 130, 3, 64
    C = H * D
    qkv = make((B, T, 3 * C), 7, dtype).cuda().requires_grad_(True)
    y_grad = make((B, T, C), 8, dtype).cuda()
    q, k, v = gpt_views(qkv, H)
    assert q.stride() == (T * 3 * C, D, 3 * C, 1)
    y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert y.grad_fn.name() == FLASH
    # Laid out like q, as PyTorch's: [B, T, H, D] in memory, so the model's reshape is free.
    assert y.transpose(1, 2).is_contiguous()
    y.transpose(1, 2).contiguous().view(B, T, C).backward(y_grad)
    grads = gpt_views(qkv.grad, H)  # dq, dk, dv as [B, H, T, D]
    # grad_out as the fused backward received it: strided like y_grad's view.
    g = y_grad.view(B, T, H, D).transpose(1, 2)
    ref_out, ref_grads = contiguous_run(q, k, v, g, is_causal=causal)
    # The forward and dK, dV have no atomics: the same numbers as from contiguous inputs.
    exactly_equal(y, ref_out, "output")
    exactly_equal(grads[1], ref_grads[1], "dk")
    exactly_equal(grads[2], ref_grads[2], "dv")
    close(grads[0], ref_grads[0], SAME_KERNEL_TOL[dtype], "dq vs contiguous inputs")
    cpu_out, cpu_grads = cpu_reference(q, k, v, g, is_causal=causal)
    close(y, cpu_out, TOL[dtype], "output vs CPU float64")
    for name, got, want in zip("qkv", grads, cpu_grads):
        close(got, want, 2 * TOL[dtype], f"d{name} vs CPU float64")


def check_layouts(q, k, v, g, dtype, causal, in_place):
    """q, k, v (views of leaves) against contiguous copies and the CPU; in_place: whether the
    fused kernel reads them where they are (else they are copied, with the same results)."""
    assert not any(t.is_contiguous() for t in (q, k, v, g))
    out, grads, extra = run_in_place(q, k, v, g, is_causal=causal)
    assert out.grad_fn.name() == FLASH
    # The forward allocates its output and logsumexp (sizes rounded to 512 bytes), plus copies of
    # the inputs it cannot read in place.
    out_bytes, lse_bytes = out.numel() * 2, out.numel() // out.shape[-1] * 4
    if in_place:
        assert extra <= out_bytes + lse_bytes + 1024, "the forward copied an input"
    else:
        assert extra >= out_bytes + lse_bytes + q.numel() * 2, "the forward did not copy"
    ref_out, ref_grads = contiguous_run(q, k, v, g, is_causal=causal)
    exactly_equal(out, ref_out, "output")
    for name, got, want in zip("qkv", grads, ref_grads):
        close(got, want, SAME_KERNEL_TOL[dtype], f"d{name} vs contiguous inputs")
    cpu_out, cpu_grads = cpu_reference(q, k, v, g, is_causal=causal)
    close(out, cpu_out, TOL[dtype], "output vs CPU float64")
    for name, got, want in zip("qkv", grads, cpu_grads):
        close(got, want, 2 * TOL[dtype], f"d{name} vs CPU float64")
    return out, grads


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_other_strided_layouts_are_read_in_place(dtype, causal):
    B, H, L, S, E = 2, 3, 70, 90, 32
    q, k, v = leaf_views(
        # Heads outside the batch: [H, B, L, E] transposed.
        (make((H, B, L, E), 1, dtype).cuda(), lambda t: t.transpose(0, 1)),
        # [B, H] cut from a buffer with a gap after each batch (they cannot merge into one dim).
        (make((B, H + 1, S, E), 2, dtype).cuda(), lambda t: t[:, :H]),
        # Rows padded to 48 elements; one value head broadcast over the heads (stride 0).
        (make((B, 1, S, 48), 3, dtype).cuda(), lambda t: t[..., :E].expand(B, H, S, E)))
    g = make((B, L, H, E), 4, dtype).cuda().transpose(1, 2)
    out, (dq, dk, dv) = check_layouts(q, k, v, g, dtype, causal, in_place=True)
    # The output and dq in q's memory order ([H, B, L, E]); dk dense in k's order; dv contiguous (v is
    # broadcast: its gradient may not share addresses).
    assert out.stride() == q.stride() and dq.stride() == q.stride()
    assert dk.is_contiguous() and dv.is_contiguous()


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_layouts_that_are_copied_match_contiguous_inputs(dtype):
    # Batch dims [A, B, H] from an [A, H, B] buffer (no cut merges them), rows of 72 + 1 elements
    # (not 16-byte aligned), a strided last dim: each is copied before the kernel runs.
    A, B, H, L, E = 2, 2, 3, 40, 72
    q, k, v = leaf_views(
        (make((A, H, B, L, E), 1, dtype).cuda(), lambda t: t.permute(0, 2, 1, 3, 4)),
        (make((A, B, H, L, E + 1), 2, dtype).cuda(), lambda t: t[..., 1:]),
        (make((A, B, H, E, L), 3, dtype).cuda(), lambda t: t.transpose(-2, -1)))
    g = make((A, H, B, L, E), 4, dtype).cuda().permute(0, 2, 1, 3, 4)
    check_layouts(q, k, v, g, dtype, True, in_place=False)


def test_saved_views_catch_in_place_changes():
    dt = ember.bfloat16
    x = make((1, 20, 3 * 64), 5, dt).cuda().requires_grad_(True)
    qkv = x * 1  # not a leaf: may be changed in place
    y = F.scaled_dot_product_attention(*gpt_views(qkv, 1), is_causal=True)
    assert y.grad_fn.name() == FLASH
    with ember.no_grad():
        qkv.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.float().sum().backward()


def test_gpt_layout_makes_no_copies():
    """W3's attention in GPT-2's layout: the forward allocates only its output and logsumexp, the
    backward only the float32 dQ buffer, delta and the three gradients."""
    dt = ember.bfloat16
    B, T, H, D = 8, 1024, 12, 64
    C = H * D
    qkv = make((B, T, 3 * C), 0, dt).cuda().requires_grad_(True)
    q, k, v = gpt_views(qkv, H)
    # The gradient reaching y from y.transpose(1, 2).contiguous().view(B, T, C): a strided view.
    g = make((B, T, C), 1, dt).cuda().view(B, T, H, D).transpose(1, 2)
    mib = 1 << 20
    out_bytes, lse_bytes = B * T * C * 2, B * H * T * 4  # 12 MiB, 384 KiB
    ember.cuda.synchronize()
    ember.cuda.reset_peak_memory_stats()
    before = ember.cuda.memory_allocated()
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    ember.cuda.synchronize()
    assert y.grad_fn.name() == FLASH
    # Copies of q, k and v would add 3 * out_bytes.
    assert ember.cuda.max_memory_allocated() - before <= out_bytes + lse_bytes + mib
    # The output's memory is [B, T, H, D]: the model's reshape back to [B, T, C] is a view.
    allocated = ember.cuda.memory_allocated()
    flat = y.transpose(1, 2).reshape(B, T, C)
    assert flat.data_ptr() == y.data_ptr() and ember.cuda.memory_allocated() == allocated
    after_forward = ember.cuda.memory_allocated()
    ember.cuda.reset_peak_memory_stats()
    grads = ember.autograd.grad([y], [q, k, v], [g])  # the fused node alone
    ember.cuda.synchronize()
    # dQ in float32 (2 * out_bytes), its cast, dK, dV and delta; copies of grad_out, q, k and v
    # would add 4 * out_bytes.
    peak = ember.cuda.max_memory_allocated() - after_forward
    assert peak <= 5 * out_bytes + lse_bytes + mib, f"backward peak {peak / mib:.1f} MiB"
    assert [t.shape for t in grads] == [q.shape, k.shape, v.shape]
    # Laid out like q, k, v: their view(B, T, C) in the model's backward copies nothing.
    assert all(t.transpose(1, 2).is_contiguous() for t in grads)
