"""scaled_dot_product_attention (the C++ op behind F.scaled_dot_product_attention) on the CPU:
the math path against a numpy reference (masks, causal with L != S, scale, gqa, batch broadcasting,
rows with no key), gradcheck and double backward in float64, half types, dropout, autocast,
PyTorch's errors, and the sdp switches. The fused CUDA kernel is tested in test_cuda_attention.py.
"""
import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck
from harness import OpCase, table_tests

RNG = np.random.default_rng(7)


def arr(*shape):
    return RNG.uniform(-2.0, 2.0, size=shape)


def t64(a, requires_grad=False):
    x = ember.tensor(np.asarray(a, dtype=np.float64))
    return x.requires_grad_(True) if requires_grad else x


def np_sdpa(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    """PyTorch's definition: bool masks keep True, float masks add; rows with no key give zeros."""
    if gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    L, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        mask = np.tril(np.ones((L, S), bool))
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0.0, m))
    w = np.where(dead, 0.0, e / np.where(dead, 1.0, e.sum(-1, keepdims=True)))
    return w @ v


_F = (np.float32, np.float64)
CASES = [
    OpCase("sdpa_4d", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), np_sdpa,
           [[(2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 3)]], dtypes=_F, rtol=1e-4, atol=1e-5),
    OpCase("sdpa_causal_l_gt_s", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
           lambda q, k, v: np_sdpa(q, k, v, causal=True), [[(2, 7, 4), (2, 5, 4), (2, 5, 4)]], dtypes=_F,
           rtol=1e-4, atol=1e-5),
    OpCase("sdpa_causal_l_lt_s", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
           lambda q, k, v: np_sdpa(q, k, v, causal=True), [[(1, 2, 3, 4), (1, 2, 6, 4), (1, 2, 6, 2)]], dtypes=_F,
           rtol=1e-4, atol=1e-5),
    OpCase("sdpa_scale_broadcast_batch",
           lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
           lambda q, k, v: np_sdpa(q, k, v, scale=0.3), [[(2, 3, 4, 5), (1, 3, 6, 5), (2, 1, 6, 5)]], dtypes=_F,
           rtol=1e-4, atol=1e-5),
    OpCase("sdpa_gqa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
           lambda q, k, v: np_sdpa(q, k, v, gqa=True), [[(2, 6, 3, 4), (2, 2, 5, 4), (2, 3, 5, 4)]], dtypes=_F,
           rtol=1e-4, atol=1e-5),
]
test_table_forward, test_table_gradcheck = table_tests(CASES)


# ---- forward against numpy ------------------------------------------------------------------------

@pytest.mark.parametrize("L,S", [(5, 5), (4, 7), (7, 4)])
def test_masks_and_causal_match_numpy(L, S):
    q, k, v = arr(2, 3, L, 4), arr(2, 3, S, 4), arr(2, 3, S, 5)
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v))
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v), rtol=1e-10)
    bmask = RNG.random((L, S)) > 0.4
    bmask[:, 0] = True
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=ember.tensor(bmask))
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, mask=bmask), rtol=1e-10)
    fmask = arr(2, 1, L, S)  # broadcast over heads
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=t64(fmask), scale=0.7)
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, mask=fmask, scale=0.7), rtol=1e-10)
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), is_causal=True)
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v, causal=True), rtol=1e-10)


def test_causal_is_tril_aligned_top_left():
    # L < S: query 0 sees key 0 only, whatever S is (PyTorch's convention, not bottom-right).
    q, k, v = arr(1, 2, 4), arr(1, 5, 4), arr(1, 5, 3)
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), is_causal=True).numpy()
    np.testing.assert_allclose(out[0, 0], v[0, 0], rtol=1e-12)
    # L > S: queries past S see every key.
    q2 = arr(1, 6, 4)
    out2 = F.scaled_dot_product_attention(t64(q2), t64(k), t64(v), is_causal=True).numpy()
    np.testing.assert_allclose(out2[0, 5], np_sdpa(q2, k, v)[0, 5], rtol=1e-10)


def test_rows_with_no_key_give_zeros_and_finite_grads():
    q, k, v = t64(arr(1, 3, 4), True), t64(arr(1, 4, 4), True), t64(arr(1, 4, 2), True)
    bmask = np.ones((3, 4), bool)
    bmask[1] = False
    fmask = np.zeros((3, 4))
    fmask[2] = -np.inf
    for mask in (ember.tensor(bmask), t64(fmask)):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        o = out.detach().numpy()
        dead = 1 if mask.dtype == ember.bool else 2
        assert np.all(o[0, dead] == 0.0)
        assert np.all(np.isfinite(o))
        out.sum().backward()
        for t in (q, k, v):
            assert np.all(np.isfinite(t.grad.numpy()))
            t.grad = None


def test_two_dim_and_empty_inputs():
    q, k, v = arr(3, 4), arr(5, 4), arr(5, 2)
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v))
    assert out.shape == (3, 2)
    np.testing.assert_allclose(out.numpy(), np_sdpa(q, k, v), rtol=1e-10)
    empty = F.scaled_dot_product_attention(ember.zeros(2, 0, 4), ember.zeros(2, 3, 4), ember.zeros(2, 3, 5))
    assert empty.shape == (2, 0, 5)


def test_non_contiguous_inputs():
    q, k, v = arr(2, 5, 3, 4), arr(2, 6, 3, 4), arr(2, 6, 3, 4)  # [B, L, H, E] transposed to [B, H, L, E]
    out = F.scaled_dot_product_attention(t64(q).transpose(1, 2), t64(k).transpose(1, 2), t64(v).transpose(1, 2),
                                         is_causal=True)
    ref = np_sdpa(q.swapaxes(1, 2), k.swapaxes(1, 2), v.swapaxes(1, 2), causal=True)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)


# ---- gradients ----------------------------------------------------------------------------------

def _grad_inputs(*shapes):
    return [t64(arr(*s), True) for s in shapes]


def test_gradcheck_bool_mask():
    mask = ember.tensor(np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]]))
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                     _grad_inputs((2, 3, 3), (2, 4, 3), (2, 4, 2)))


def test_gradcheck_float_mask_including_the_mask():
    q, k, v = _grad_inputs((1, 2, 3, 2), (1, 2, 4, 2), (1, 2, 4, 3))
    m = t64(arr(2, 1, 3, 4), True)
    assert gradcheck(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.5),
                     [q, k, v, m])


@pytest.mark.parametrize("L,S", [(3, 3), (2, 4), (4, 2)])
def test_gradcheck_causal(L, S):
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                     _grad_inputs((2, L, 3), (2, S, 3), (2, S, 2)))


def test_gradcheck_gqa():
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True),
                     _grad_inputs((1, 4, 3, 2), (1, 2, 3, 2), (1, 1, 3, 2)))


def test_double_backward_of_the_math_path():
    q, k, v = _grad_inputs((1, 3, 2), (1, 3, 2), (1, 3, 2))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    (gq,) = ember.autograd.grad((out * out).sum(), [q], create_graph=True)
    (ggk,) = ember.autograd.grad(gq.sum(), [k])
    assert ggk.shape == k.shape and np.all(np.isfinite(ggk.numpy()))
    # Finite differences of d/dk sum(d/dq sum(out^2)).
    def f(kk):
        qq = q.detach().requires_grad_(True)
        o = F.scaled_dot_product_attention(qq, kk, v.detach(), is_causal=True)
        (g,) = ember.autograd.grad((o * o).sum(), [qq])
        return g.sum().item()
    base = k.detach().numpy().copy()
    eps = 1e-6
    idx = (0, 1, 0)
    plus, minus = base.copy(), base.copy()
    plus[idx] += eps
    minus[idx] -= eps
    fd = (f(t64(plus)) - f(t64(minus))) / (2 * eps)
    np.testing.assert_allclose(ggk.numpy()[idx], fd, rtol=1e-4, atol=1e-6)


def test_grad_fn_is_the_math_composition_on_the_cpu():
    q, k, v = _grad_inputs((1, 2, 3, 8), (1, 2, 3, 8), (1, 2, 3, 8))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.grad_fn is not None and "FlashAttention" not in out.grad_fn.name()


# ---- dtypes, dropout, autocast ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_half_types_compute_in_float32(dtype):
    q, k, v = arr(2, 5, 8), arr(2, 6, 8), arr(2, 6, 8)
    ins = [ember.tensor(a, dtype=ember.float32).to(dtype) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*ins, is_causal=True)
    assert out.dtype == dtype
    ref = np_sdpa(*[t.to(ember.float64).numpy() for t in ins], causal=True)
    np.testing.assert_allclose(out.to(ember.float64).numpy(), ref, rtol=2e-2, atol=2e-2)


def test_dropout():
    q, k, v = t64(arr(2, 4, 3)), t64(arr(2, 5, 3)), t64(arr(2, 5, 3))
    assert np.all(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy() == 0.0)
    ember.manual_seed(3)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    ember.manual_seed(3)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, F.scaled_dot_product_attention(q, k, v).numpy())
    # The kept weights are scaled by 1 / (1 - p): averaged over many draws, the output is unbiased.
    qq, kk, vv = ember.zeros(1, 1, 2), ember.zeros(1, 400, 2), ember.ones(1, 400, 2)
    mean = F.scaled_dot_product_attention(qq, kk, vv, dropout_p=0.5).numpy().mean()
    assert abs(mean - 1.0) < 0.2


def test_autocast_cpu_runs_in_bfloat16():
    q, k, v = ember.randn(1, 2, 4, 8), ember.randn(1, 2, 4, 8), ember.randn(1, 2, 4, 8)
    mask = ember.zeros(4, 4)
    with ember.autocast("cpu"):
        assert F.scaled_dot_product_attention(q, k, v).dtype == ember.bfloat16
        assert F.scaled_dot_product_attention(q, k, v, attn_mask=mask).dtype == ember.bfloat16
    assert F.scaled_dot_product_attention(q, k, v).dtype == ember.float32


# ---- errors -------------------------------------------------------------------------------------

def test_errors_name_the_op():
    q, k, v = ember.randn(2, 3, 4), ember.randn(2, 5, 4), ember.randn(2, 5, 6)
    op = "scaled_dot_product_attention"
    with pytest.raises(RuntimeError, match=f"{op}: explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ember.ones(3, 5, dtype=ember.bool), is_causal=True)
    with pytest.raises(RuntimeError, match=f"{op}: .*same dtype.*float64"):
        F.scaled_dot_product_attention(q, k.double(), v)
    with pytest.raises(RuntimeError, match=f"{op}: .*at least 2-dimensional"):
        F.scaled_dot_product_attention(ember.randn(4), k, v)
    with pytest.raises(RuntimeError, match=rf"{op}: query's last dim \(4\) must equal key's \(3\)"):
        F.scaled_dot_product_attention(q, ember.randn(2, 5, 3), v)
    with pytest.raises(RuntimeError, match=f"{op}: key and value must have the same sequence length"):
        F.scaled_dot_product_attention(q, k, ember.randn(2, 4, 6))
    with pytest.raises(RuntimeError, match=f"{op}: expected attn_mask dtype to be bool or float.*int64"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ember.zeros(3, 5, dtype=ember.int64))
    with pytest.raises(RuntimeError, match=op):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ember.zeros(4, 5))  # does not broadcast to [2, 3, 5]
    with pytest.raises(RuntimeError, match=f"{op}: expected floating point"):
        F.scaled_dot_product_attention(q.long(), k.long(), v.long())
    with pytest.raises(RuntimeError, match=f"{op}: dropout probability"):
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.5)
    with pytest.raises(RuntimeError, match=rf"{op}: .*key \(2\) and value \(2\) must divide .* query \(3\)"):
        F.scaled_dot_product_attention(ember.randn(1, 3, 2, 4), ember.randn(1, 2, 2, 4), ember.randn(1, 2, 2, 4),
                                       enable_gqa=True)
    with pytest.raises(RuntimeError, match=f"{op}: enable_gqa=True needs a head dim"):
        F.scaled_dot_product_attention(ember.randn(2, 4), ember.randn(2, 4), ember.randn(2, 4), enable_gqa=True)
    # Without enable_gqa, different head counts are a broadcasting error of the batch dims.
    with pytest.raises(RuntimeError, match=op):
        F.scaled_dot_product_attention(ember.randn(1, 3, 2, 4), ember.randn(1, 2, 2, 4), ember.randn(1, 2, 2, 4))


# ---- the sdp switches ------------------------------------------------------------------------------

@pytest.fixture
def restore_switches():
    flash, math_ = ember.backends.cuda.flash_sdp_enabled(), ember.backends.cuda.math_sdp_enabled()
    yield
    ember.backends.cuda.enable_flash_sdp(flash)
    ember.backends.cuda.enable_math_sdp(math_)


def test_switches_round_trip_and_math_off_raises_on_the_cpu(restore_switches):
    cuda = ember.backends.cuda
    assert cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()
    cuda.enable_flash_sdp(False)
    assert not cuda.flash_sdp_enabled()
    cuda.enable_flash_sdp(True)
    assert cuda.flash_sdp_enabled()
    q = ember.randn(1, 2, 3, 8)
    assert "not on a CUDA device" in ember._C._nn._flash_attention_blocker(q, q, q)
    cuda.enable_math_sdp(False)
    assert not cuda.math_sdp_enabled()
    with pytest.raises(RuntimeError, match="scaled_dot_product_attention: no available kernel.*not on a CUDA device"):
        F.scaled_dot_product_attention(q, q, q)
    cuda.enable_math_sdp(True)
    assert F.scaled_dot_product_attention(q, q, q).shape == (1, 2, 3, 8)


def test_functional_keeps_the_torch_signature():
    import inspect
    params = list(inspect.signature(F.scaled_dot_product_attention).parameters)
    assert params == ["query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa"]
    assert F.scaled_dot_product_attention.__doc__


# ---- MultiheadAttention: need_weights=False goes through the op ---------------------------------------

@pytest.mark.parametrize("opts", [{}, {"add_bias_kv": True, "add_zero_attn": True}, {"batch_first": True}])
def test_multihead_attention_without_weights_matches_with_weights(opts):
    mha = ember.nn.MultiheadAttention(8, 2, **opts).double()
    q, k, v = t64(arr(4, 3, 8)), t64(arr(5, 3, 8)), t64(arr(5, 3, 8))  # [L or S, N, E]
    if opts.get("batch_first"):
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
    amask = ember.tensor(RNG.random((4, 5)) > 0.7)  # True = blocked
    kpm = ember.tensor(np.array([[False] * 4 + [True]] * 3))
    for kw in ({}, {"attn_mask": amask}, {"key_padding_mask": kpm}, {"attn_mask": t64(arr(6, 4, 5))}):
        with_w, _ = mha(q, k, v, need_weights=True, **kw)
        without, none = mha(q, k, v, need_weights=False, **kw)
        assert none is None
        np.testing.assert_allclose(without.detach().numpy(), with_w.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_sdpa_kernel_context_manager(restore_switches):
    from ember.nn.attention import SDPBackend, sdpa_kernel
    q = ember.randn(1, 2, 3, 8)
    with sdpa_kernel(SDPBackend.MATH):
        assert not ember.backends.cuda.flash_sdp_enabled() and ember.backends.cuda.math_sdp_enabled()
        assert F.scaled_dot_product_attention(q, q, q).shape == (1, 2, 3, 8)
    assert ember.backends.cuda.flash_sdp_enabled() and ember.backends.cuda.math_sdp_enabled()
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        assert ember.backends.cuda.flash_sdp_enabled() and not ember.backends.cuda.math_sdp_enabled()
        with pytest.raises(RuntimeError, match="no available kernel"):  # the CPU has no fused kernel
            F.scaled_dot_product_attention(q, q, q)
    assert ember.backends.cuda.math_sdp_enabled()
    with pytest.raises(TypeError):
        with sdpa_kernel(["math"]):
            pass
    # torch's other switches exist and are remembered (ember has no such kernels).
    ember.backends.cuda.enable_mem_efficient_sdp(False)
    assert not ember.backends.cuda.mem_efficient_sdp_enabled()
    ember.backends.cuda.enable_cudnn_sdp(False)
    assert not ember.backends.cuda.cudnn_sdp_enabled()
