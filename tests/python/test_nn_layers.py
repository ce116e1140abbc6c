"""ember.nn layers: forward against numpy references, gradcheck in float64, default initialisation.

Layers whose functional comes from another family (conv, pools, norms, losses, embedding) skip
while ember.nn.functional lacks it.
"""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck
from harness import OpCase, table_tests

RNG = np.random.default_rng(1)


def need(*names):
    for name in names:
        if not hasattr(F, name):
            pytest.skip(f"F.{name} not available yet")


def arr(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape)


def t64(a, requires_grad=False):
    x = ember.tensor(np.asarray(a, dtype=np.float64))
    return x.requires_grad_(True) if requires_grad else x


def npy(t):
    return t.detach().numpy()


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(npy(actual), expected, rtol=rtol, atol=atol)


def check_layer_grad(layer, *inputs):
    """gradcheck through the layer w.r.t. its inputs and every parameter (float64)."""
    layer.double()
    params = [p for p in layer.parameters()]
    n = len(inputs)

    def fn(*args):
        saved = [p.detach().clone() for p in params]
        with ember.no_grad():
            for p, a in zip(params, args[n:]):
                p.copy_(a)
        try:
            # Run with the given tensors as the parameters' values, differentiably.
            return _call_with_params(layer, params, args[n:], args[:n])
        finally:
            with ember.no_grad():
                for p, s in zip(params, saved):
                    p.copy_(s)

    leaves = list(inputs) + [p.detach().clone().requires_grad_(True) for p in params]
    assert gradcheck(fn, leaves)


def _call_with_params(layer, params, values, inputs):
    # Temporarily swap each Parameter for a differentiable tensor by name.
    named = {id(p): name for name, p in layer.named_parameters()}
    originals = []
    for p, v in zip(params, values):
        module_path, _, attr = named[id(p)].rpartition(".")
        owner = layer.get_submodule(module_path)
        originals.append((owner, attr, owner._parameters[attr]))
        owner._parameters[attr] = v
    try:
        return layer(*inputs)
    finally:
        for owner, attr, p in originals:
            owner._parameters[attr] = p


# ---- the functional compositions as an op table (also picked up by the fuzz test) ---------------

def _np_normalize(a, p=2.0, dim=1):
    n = np.abs(a) ** p if p != 2.0 else a * a
    return a / np.maximum(n.sum(axis=dim, keepdims=True) ** (1 / p), 1e-12)


def _np_sdpa(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


_F = (np.float32, np.float64)
CASES = [
    OpCase("leaky_relu", lambda x: F.leaky_relu(x, 0.1), lambda a: np.where(a > 0, a, a * np.float32(0.1)),
           [[(3, 4)], [(5,)], [()]], dtypes=_F),
    OpCase("elu", lambda x: F.elu(x, 0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(np.minimum(a, 0))),
           [[(3, 4)], [(5,)]], dtypes=_F, rtol=1e-5, atol=1e-6),
    OpCase("relu6", F.relu6, lambda a: np.clip(a, 0, 6), [[(3, 4)]], dtypes=_F, domain=(-3, 8)),
    OpCase("hardtanh", lambda x: F.hardtanh(x, -0.5, 1.5), lambda a: np.clip(a, -0.5, 1.5), [[(3, 4)]],
           dtypes=_F),
    OpCase("hardsigmoid", F.hardsigmoid, lambda a: np.clip(a / 6 + 0.5, 0, 1), [[(3, 4)]], dtypes=_F,
           domain=(-5, 5)),
    OpCase("hardswish", F.hardswish, lambda a: a * np.clip(a / 6 + 0.5, 0, 1), [[(3, 4)]], dtypes=_F,
           domain=(-5, 5)),
    OpCase("logsigmoid", F.logsigmoid, lambda a: -np.log1p(np.exp(-a)), [[(3, 4)]], dtypes=_F),
    OpCase("softsign", F.softsign, lambda a: a / (np.abs(a) + 1), [[(3, 4)]], dtypes=_F),
    OpCase("mish", F.mish, lambda a: a * np.tanh(np.log1p(np.exp(a))), [[(3, 4)]], dtypes=_F),
    OpCase("cosine_similarity", F.cosine_similarity,
           lambda a, b: (a * b).sum(1) / (np.maximum(np.linalg.norm(a, axis=1), 1e-8)
                                          * np.maximum(np.linalg.norm(b, axis=1), 1e-8)),
           [[(3, 4), (3, 4)], [(2, 5, 3), (1, 5, 3)]], dtypes=_F, rtol=1e-4, atol=1e-5),
    OpCase("F.linear", lambda x, w, b: F.linear(x, w, b), lambda x, w, b: x @ w.T + b,
           [[(4, 3), (2, 3), (2,)], [(2, 4, 3), (5, 3), (5,)], [(3,), (2, 3), (2,)]], dtypes=_F, rtol=1e-4,
           atol=1e-5),
    OpCase("F.linear_nobias", lambda x, w: F.linear(x, w), lambda x, w: x @ w.T, [[(4, 3), (2, 3)]], dtypes=_F,
           rtol=1e-4, atol=1e-5),
    OpCase("normalize", lambda x: F.normalize(x), _np_normalize, [[(3, 4)], [(2, 3, 2)]], dtypes=_F, rtol=1e-4),
    OpCase("normalize_p1_dim0", lambda x: F.normalize(x, p=1.0, dim=0), lambda a: _np_normalize(a, 1.0, 0),
           [[(3, 4)]], dtypes=_F, rtol=1e-4),
    OpCase("pad", lambda x: F.pad(x, (1, 2, 0, 1)), lambda a: np.pad(a, [(0, 0)] * (a.ndim - 2) + [(0, 1), (1, 2)]),
           [[(3, 4)], [(2, 3, 4)]], dtypes=_F),
    OpCase("pad_reflect", lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"),
           lambda a: np.pad(a, [(0, 0)] * (a.ndim - 2) + [(1, 2), (2, 1)], mode="reflect"),
           [[(4, 5)], [(2, 3, 4)]], dtypes=_F),
    OpCase("pad_replicate", lambda x: F.pad(x, (0, 3, 2, 1), mode="replicate"),
           lambda a: np.pad(a, [(0, 0)] * (a.ndim - 2) + [(2, 1), (0, 3)], mode="edge"),
           [[(3, 4)], [(2, 1, 2)]], dtypes=_F),
    OpCase("pad_circular", lambda x: F.pad(x, (3, 1), mode="circular"),
           lambda a: np.pad(a, [(0, 0)] * (a.ndim - 1) + [(3, 1)], mode="wrap"),
           [[(2, 4)], [(2, 3, 3)]], dtypes=_F),
    OpCase("sdpa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), _np_sdpa,
           [[(2, 3, 4), (2, 5, 4), (2, 5, 2)], [(4, 3), (4, 3), (4, 3)]], dtypes=_F, rtol=1e-4, atol=1e-5),
]
test_table_forward, test_table_gradcheck = table_tests(CASES)


# ---- Linear / Bilinear --------------------------------------------------------------------------

def test_linear_forward_and_grad():
    lin = nn.Linear(4, 3)
    x = arr(5, 4).astype(np.float32)
    w, b = npy(lin.weight), npy(lin.bias)
    close(lin(ember.tensor(x)), x @ w.T + b, rtol=1e-5)
    x3 = arr(2, 5, 4).astype(np.float32)
    close(lin(ember.tensor(x3)), x3 @ w.T + b, rtol=1e-5)
    nobias = nn.Linear(4, 3, bias=False)
    assert nobias.bias is None and len(list(nobias.parameters())) == 1
    close(nobias(ember.tensor(x)), x @ npy(nobias.weight).T, rtol=1e-5)
    check_layer_grad(nn.Linear(3, 2), t64(arr(4, 3), True))


def test_linear_default_init_bounds():
    ember.manual_seed(0)
    lin = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)  # kaiming_uniform_(a=sqrt(5)) gives 1/sqrt(fan_in) too
    w = npy(lin.weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01
    assert np.abs(npy(lin.bias)).max() <= bound
    ember.manual_seed(0)
    np.testing.assert_array_equal(npy(nn.Linear(100, 50).weight), w)  # reproducible


def test_bilinear():
    bl = nn.Bilinear(3, 4, 2)
    x1, x2 = arr(5, 3), arr(5, 4)
    out = bl(ember.tensor(x1.astype(np.float32)), ember.tensor(x2.astype(np.float32)))
    ref = np.einsum("ni,oij,nj->no", x1, npy(bl.weight), x2) + npy(bl.bias)
    close(out, ref, rtol=1e-4, atol=1e-5)
    check_layer_grad(nn.Bilinear(2, 3, 2), t64(arr(3, 2), True), t64(arr(3, 3), True))


# ---- activations --------------------------------------------------------------------------------

def _erf(x):
    return np.vectorize(math.erf)(x)


ACTIVATIONS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.ELU(alpha=1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(np.minimum(x, 0)))),
    (nn.GELU(), lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    (nn.GELU(approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Softplus(), lambda x: np.log1p(np.exp(x))),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.Hardtanh(-0.5, 1.0), lambda x: np.clip(x, -0.5, 1.0)),
    (nn.Hardswish(), lambda x: x * np.clip(x / 6 + 0.5, 0, 1)),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nn.LogSigmoid(), lambda x: -np.log1p(np.exp(-x))),
    (nn.Softmax(dim=1), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    (nn.LogSoftmax(dim=-1), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
]


@pytest.mark.parametrize("layer,ref", ACTIVATIONS, ids=[repr(a[0]) for a in ACTIVATIONS])
def test_activation(layer, ref):
    x = arr(3, 4)
    x[0, 0] = 0.5  # keep away from kinks for gradcheck
    close(layer(t64(x)), ref(x), rtol=1e-6, atol=1e-7)
    close(layer(ember.tensor(x.astype(np.float32))), ref(x), rtol=1e-4, atol=1e-5)
    assert gradcheck(lambda t: layer(t), [t64(x + 0.01, True)])


def test_inplace_relu_and_leaky_relu():
    x = ember.tensor([-1.0, 2.0])
    y = nn.ReLU(inplace=True)(x)
    close(x, [0.0, 2.0])
    assert y is x or y.data_ptr() == x.data_ptr()
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"


def test_softmax_default_dim_and_dtype():
    x = arr(2, 3).astype(np.float32)
    out = F.softmax(ember.tensor(x), dim=0, dtype=ember.float64)
    assert out.dtype == ember.float64
    close(out, np.exp(x) / np.exp(x).sum(0), rtol=1e-5)


# ---- functional compositions --------------------------------------------------------------------

def test_linear_functional_grad():
    assert gradcheck(F.linear, [t64(arr(2, 3, 4), True), t64(arr(5, 4), True), t64(arr(5), True)])
    assert gradcheck(lambda x, w: F.linear(x, w), [t64(arr(3, 4), True), t64(arr(2, 4), True)])


def test_one_hot():
    out = F.one_hot(ember.tensor([0, 2, 1]), 4)
    np.testing.assert_array_equal(out.numpy(), np.eye(4, dtype=np.int64)[[0, 2, 1]])


def test_normalize():
    x = arr(3, 4)
    close(F.normalize(t64(x)), x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-10)
    close(F.normalize(t64(x), p=1, dim=0), x / np.abs(x).sum(0, keepdims=True), rtol=1e-10)
    assert gradcheck(lambda t: F.normalize(t), [t64(x, True)])


def test_pad_constant():
    x = arr(2, 3, 4)
    close(F.pad(t64(x), (1, 2)), np.pad(x, ((0, 0), (0, 0), (1, 2))))
    close(F.pad(t64(x), (1, 0, 0, 2), value=3.0), np.pad(x, ((0, 0), (0, 2), (1, 0)), constant_values=3.0))
    close(F.pad(t64(x), (-1, 1)), np.pad(x, ((0, 0), (0, 0), (0, 1)))[..., 1:])
    assert gradcheck(lambda t: F.pad(t, (1, 1, 2, 0)), [t64(x, True)])
    with pytest.raises(ValueError):
        F.pad(t64(x), (1,))


def test_pad_modes_errors():
    x = t64(arr(2, 3, 4))
    with pytest.raises(ValueError, match="reflect"):
        F.pad(x, (4, 0), mode="reflect")  # must be smaller than the size
    with pytest.raises(ValueError, match="circular"):
        F.pad(x, (0, 5), mode="circular")
    with pytest.raises(ValueError, match="negative padding"):
        F.pad(x, (-1, 0), mode="replicate")
    with pytest.raises(ValueError, match="value"):
        F.pad(x, (1, 1), mode="reflect", value=2.0)
    with pytest.raises(NotImplementedError, match="mode 'zeros'"):
        F.pad(x, (1, 1), mode="zeros")


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_scaled_dot_product_attention():
    q, k, v = arr(2, 3, 5, 4), arr(2, 3, 6, 4), arr(2, 3, 6, 4)
    ref = _np_softmax(q @ k.swapaxes(-1, -2) / 2.0) @ v
    close(F.scaled_dot_product_attention(t64(q), t64(k), t64(v)), ref, rtol=1e-10)
    mask = RNG.random((5, 6)) > 0.3
    mask[:, 0] = True
    scores = np.where(mask, q @ k.swapaxes(-1, -2) / 2.0, -np.inf)
    close(F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=ember.tensor(mask)),
          _np_softmax(scores) @ v, rtol=1e-10)
    fmask = arr(5, 6)
    close(F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=t64(fmask), scale=0.3),
          _np_softmax(q @ k.swapaxes(-1, -2) * 0.3 + fmask) @ v, rtol=1e-10)
    qc = arr(2, 5, 4)
    causal = np.where(np.tril(np.ones((5, 5), bool)), qc @ qc.swapaxes(-1, -2) / 2.0, -np.inf)
    close(F.scaled_dot_product_attention(t64(qc), t64(qc), t64(qc), is_causal=True),
          _np_softmax(causal) @ qc, rtol=1e-10)
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
                     [t64(arr(1, 3, 2), True), t64(arr(1, 3, 2), True), t64(arr(1, 3, 2), True)])


# ---- MultiheadAttention ---------------------------------------------------------------------------

def _np_mha(mha, q, k, v, attn_mask=None, key_padding_mask=None):
    """Reference with sequence-first [L, N, E] inputs; returns output and head-averaged weights."""
    E, H = mha.embed_dim, mha.num_heads
    D = E // H
    W, b = npy(mha.in_proj_weight), npy(mha.in_proj_bias)
    qp, kp, vp = q @ W[:E].T + b[:E], k @ W[E:2 * E].T + b[E:2 * E], v @ W[2 * E:].T + b[2 * E:]
    L, N, _ = q.shape
    S = k.shape[0]

    def heads(x, n):
        return x.reshape(n, N, H, D).transpose(1, 2, 0, 3)

    scores = heads(qp, L) @ heads(kp, S).swapaxes(-1, -2) / np.sqrt(D)
    if attn_mask is not None:
        scores = np.where(attn_mask, -np.inf, scores)
    if key_padding_mask is not None:
        scores = np.where(key_padding_mask[:, None, None, :], -np.inf, scores)
    w = _np_softmax(scores)
    out = (w @ heads(vp, S)).transpose(2, 0, 1, 3).reshape(L, N, E)
    out = out @ npy(mha.out_proj.weight).T + npy(mha.out_proj.bias)
    return out, w.mean(1)


def test_multihead_attention_matches_reference():
    ember.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2).double()
    with ember.no_grad():
        mha.in_proj_bias.uniform_(-0.5, 0.5)
        mha.out_proj.bias.uniform_(-0.5, 0.5)
    q, k, v = arr(4, 3, 8), arr(5, 3, 8), arr(5, 3, 8)
    out, w = mha(t64(q), t64(k), t64(v))
    ref_out, ref_w = _np_mha(mha, q, k, v)
    close(out, ref_out, rtol=1e-9, atol=1e-10)
    close(w, ref_w, rtol=1e-9, atol=1e-10)

    kpm = np.zeros((3, 5), bool)
    kpm[1, 3:] = True
    am = np.triu(np.ones((4, 5), bool), 2)
    out, w = mha(t64(q), t64(k), t64(v), key_padding_mask=ember.tensor(kpm), attn_mask=ember.tensor(am))
    ref_out, ref_w = _np_mha(mha, q, k, v, am, kpm)
    close(out, ref_out, rtol=1e-9, atol=1e-10)
    close(w, ref_w, rtol=1e-9, atol=1e-10)

    out, none = mha(t64(q), t64(k), t64(v), need_weights=False)
    assert none is None
    _, per_head = mha(t64(q), t64(k), t64(v), average_attn_weights=False)
    assert per_head.shape == (3, 2, 4, 5)


def test_multihead_attention_batch_first_and_unbatched():
    mha = nn.MultiheadAttention(4, 2, batch_first=True).double()
    x = arr(2, 3, 4)
    out, w = mha(t64(x), t64(x), t64(x))
    ref, ref_w = _np_mha(mha, x.transpose(1, 0, 2), x.transpose(1, 0, 2), x.transpose(1, 0, 2))
    close(out, ref.transpose(1, 0, 2), rtol=1e-9, atol=1e-10)
    assert w.shape == (2, 3, 3)
    single, w1 = mha(t64(x[0]), t64(x[0]), t64(x[0]))
    close(single, ref.transpose(1, 0, 2)[0], rtol=1e-9, atol=1e-10)
    assert w1.shape == (3, 3)
    future = np.triu(np.ones((3, 3), bool), 1)
    causal, _ = mha(t64(x), t64(x), t64(x), attn_mask=ember.tensor(future), is_causal=True)
    ref_c, _ = _np_mha(mha, *(x.transpose(1, 0, 2),) * 3, attn_mask=future)
    close(causal, ref_c.transpose(1, 0, 2), rtol=1e-9, atol=1e-10)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        mha(t64(x), t64(x), t64(x), is_causal=True)


def test_multihead_attention_grad_and_params():
    mha = nn.MultiheadAttention(4, 2)
    assert [n for n, _ in mha.named_parameters()] == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                                      "out_proj.bias"]
    check_layer_grad(mha, t64(arr(3, 1, 4), True), t64(arr(2, 1, 4), True), t64(arr(2, 1, 4), True))
    with pytest.raises(AssertionError):
        nn.MultiheadAttention(5, 2)


def _np_mha_general(mha, q, k, v, attn_mask=None, key_padding_mask=None):
    """Reference for every MultiheadAttention variant (sequence-first inputs, bool masks, True = blocked):
    separate or packed projection weights, bias_k / bias_v and a zero key/value appended after the keys."""
    E, H = mha.embed_dim, mha.num_heads
    D = E // H
    if mha.in_proj_weight is not None:
        Wq, Wk, Wv = np.split(npy(mha.in_proj_weight), 3)
    else:
        Wq, Wk, Wv = npy(mha.q_proj_weight), npy(mha.k_proj_weight), npy(mha.v_proj_weight)
    b = npy(mha.in_proj_bias) if mha.in_proj_bias is not None else np.zeros(3 * E)
    qp, kp, vp = q @ Wq.T + b[:E], k @ Wk.T + b[E:2 * E], v @ Wv.T + b[2 * E:]
    L, N, _ = q.shape
    am = np.zeros((L, k.shape[0]), bool) if attn_mask is None else attn_mask
    kpm = np.zeros((N, k.shape[0]), bool) if key_padding_mask is None else key_padding_mask
    extra = []
    if mha.bias_k is not None:
        extra.append((np.broadcast_to(npy(mha.bias_k), (1, N, E)), np.broadcast_to(npy(mha.bias_v), (1, N, E))))
    if mha.add_zero_attn:
        extra.append((np.zeros((1, N, E)), np.zeros((1, N, E))))
    for ek, ev in extra:  # a zero key projects to zero here because it is appended after projection
        kp, vp = np.concatenate([kp, ek]), np.concatenate([vp, ev])
        am = np.concatenate([am, np.zeros((L, 1), bool)], 1)
        kpm = np.concatenate([kpm, np.zeros((N, 1), bool)], 1)
    S = kp.shape[0]

    def heads(x, n):
        return x.reshape(n, N, H, D).transpose(1, 2, 0, 3)

    scores = heads(qp, L) @ heads(kp, S).swapaxes(-1, -2) / np.sqrt(D)
    scores = np.where(am, -np.inf, scores)
    scores = np.where(kpm[:, None, None, :], -np.inf, scores)
    w = _np_softmax(scores)
    out = (w @ heads(vp, S)).transpose(2, 0, 1, 3).reshape(L, N, E)
    out = out @ npy(mha.out_proj.weight).T
    if mha.out_proj.bias is not None:
        out = out + npy(mha.out_proj.bias)
    return out, w.mean(1)


def _randomize_biases(mha):
    with ember.no_grad():
        for p in (mha.in_proj_bias, mha.out_proj.bias):
            if p is not None:
                p.uniform_(-0.5, 0.5)


def test_multihead_attention_kdim_vdim():
    ember.manual_seed(2)
    mha = nn.MultiheadAttention(6, 2, kdim=4, vdim=5)
    assert not mha._qkv_same_embed_dim and mha.in_proj_weight is None
    assert [(n, tuple(p.shape)) for n, p in mha.named_parameters()] == [
        ("q_proj_weight", (6, 6)), ("k_proj_weight", (6, 4)), ("v_proj_weight", (6, 5)), ("in_proj_bias", (18,)),
        ("out_proj.weight", (6, 6)), ("out_proj.bias", (6,))]
    for p, fan in ((mha.q_proj_weight, 12), (mha.k_proj_weight, 10), (mha.v_proj_weight, 11)):
        bound = math.sqrt(6 / fan)  # xavier_uniform per weight
        assert npy(p).max() <= bound and npy(p).min() >= -bound and np.abs(npy(p)).max() > bound / 2
    mha.double()
    _randomize_biases(mha)
    q, k, v = arr(3, 2, 6), arr(5, 2, 4), arr(5, 2, 5)
    am = np.triu(np.ones((3, 5), bool), 3)
    kpm = np.zeros((2, 5), bool)
    kpm[0, 4] = True
    out, w = mha(t64(q), t64(k), t64(v), key_padding_mask=ember.tensor(kpm), attn_mask=ember.tensor(am))
    ref_out, ref_w = _np_mha_general(mha, q, k, v, am, kpm)
    close(out, ref_out, rtol=1e-9, atol=1e-10)
    close(w, ref_w, rtol=1e-9, atol=1e-10)
    # Same kdim/vdim as embed_dim keeps the packed weight.
    assert nn.MultiheadAttention(6, 2, kdim=6, vdim=6).in_proj_weight.shape == (18, 6)
    with pytest.raises(AssertionError, match="embedding dimensions 4 and 5"):
        mha(t64(q), t64(q), t64(q))
    check_layer_grad(nn.MultiheadAttention(4, 2, kdim=3, vdim=2, bias=False), t64(arr(2, 1, 4), True),
                     t64(arr(3, 1, 3), True), t64(arr(3, 1, 2), True))


def test_multihead_attention_bias_kv_and_zero_attn():
    ember.manual_seed(3)
    mha = nn.MultiheadAttention(4, 2, add_bias_kv=True)
    assert [n for n, _ in mha.named_parameters()] == ["in_proj_weight", "in_proj_bias", "bias_k", "bias_v",
                                                      "out_proj.weight", "out_proj.bias"]
    assert mha.bias_k.shape == (1, 1, 4) and mha.bias_v.shape == (1, 1, 4)
    assert np.abs(npy(mha.bias_k)).max() > 0  # xavier_normal, not zeros
    q, k, v = arr(3, 2, 4), arr(5, 2, 4), arr(5, 2, 4)
    am = np.triu(np.ones((3, 5), bool), 1)
    kpm = np.zeros((2, 5), bool)
    kpm[1, 2:] = True
    for flags in (dict(add_bias_kv=True), dict(add_zero_attn=True), dict(add_bias_kv=True, add_zero_attn=True)):
        mha = nn.MultiheadAttention(4, 2, kdim=3, **flags).double()
        _randomize_biases(mha)
        kk = arr(5, 2, 3)
        out, w = mha(t64(q), t64(kk), t64(v), key_padding_mask=ember.tensor(kpm), attn_mask=ember.tensor(am))
        ref_out, ref_w = _np_mha_general(mha, q, kk, v, am, kpm)
        assert w.shape == (2, 3, 5 + len(flags))
        close(out, ref_out, rtol=1e-9, atol=1e-10)
        close(w, ref_w, rtol=1e-9, atol=1e-10)
        # A float mask is padded with zeros too; batch_first and unbatched inputs work the same way.
        fm = arr(3, 5)
        out_f, _ = mha(t64(q), t64(kk), t64(v), attn_mask=t64(fm))
        assert out_f.shape == (3, 2, 4)
        single, _ = mha(t64(q[:, 0]), t64(kk[:, 0]), t64(v[:, 0]))
        ref_single, _ = _np_mha_general(mha, q[:, :1], kk[:, :1], v[:, :1])
        close(single, ref_single[:, 0], rtol=1e-9, atol=1e-10)
    check_layer_grad(nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True), t64(arr(2, 1, 4), True),
                     t64(arr(3, 1, 4), True), t64(arr(3, 1, 4), True))


def test_multihead_attention_mask_shapes_are_checked():
    mha = nn.MultiheadAttention(4, 2)
    x = t64(arr(3, 2, 4)).float()
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        mha(x, x, x, attn_mask=ember.zeros(3, 4, dtype=ember.bool))
    with pytest.raises(RuntimeError, match="3D attn_mask"):
        mha(x, x, x, attn_mask=ember.zeros(3, 3, 3, dtype=ember.bool))
    with pytest.raises(AssertionError, match="key_padding_mask"):
        mha(x, x, x, key_padding_mask=ember.zeros(3, 2, dtype=ember.bool))


@pytest.mark.parametrize("kwargs", [dict(kdim=3, vdim=5), dict(add_bias_kv=True, add_zero_attn=True),
                                    dict(batch_first=True, bias=False)])
def test_multihead_attention_matches_torch(kwargs):
    torch = pytest.importorskip("torch")
    ember.manual_seed(4)
    mine = nn.MultiheadAttention(4, 2, **kwargs).double()
    _randomize_biases(mine)
    theirs = torch.nn.MultiheadAttention(4, 2, **kwargs).double()
    assert list(theirs.state_dict()) == list(mine.state_dict())
    theirs.load_state_dict({k: torch.from_numpy(npy(v).copy()) for k, v in mine.state_dict().items()})
    kd, vd = kwargs.get("kdim", 4), kwargs.get("vdim", 4)
    q, k, v = arr(3, 2, 4), arr(5, 2, kd), arr(5, 2, vd)  # [L, N, E]
    if kwargs.get("batch_first"):
        q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
    kpm = np.zeros((2, 5), bool)
    kpm[1, 3:] = True
    ours = mine(t64(q), t64(k), t64(v), key_padding_mask=ember.tensor(kpm))
    ref = theirs(*(torch.from_numpy(a) for a in (q, k, v)), key_padding_mask=torch.from_numpy(kpm))
    close(ours[0], ref[0].detach().numpy(), rtol=1e-9, atol=1e-10)
    close(ours[1], ref[1].detach().numpy(), rtol=1e-9, atol=1e-10)


# ---- Dropout ------------------------------------------------------------------------------------

def test_dropout_train_and_eval():
    need("dropout")
    d = nn.Dropout(0.5)
    x = ember.ones(2000)
    y = npy(d(x))
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert 0.4 < (y == 0).mean() < 0.6
    d.eval()
    assert np.array_equal(npy(d(x)), np.ones(2000))
    with pytest.raises(ValueError):
        nn.Dropout(1.5)


# ---- Conv ---------------------------------------------------------------------------------------

def np_conv2d(x, w, b, stride, padding, dilation, groups):
    N, C, H, W = x.shape
    O, Cg, KH, KW = w.shape
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    OH = (H + 2 * ph - dh * (KH - 1) - 1) // sh + 1
    OW = (W + 2 * pw - dw * (KW - 1) - 1) // sw + 1
    out = np.zeros((N, O, OH, OW))
    og = O // groups
    for o in range(O):
        g = o // og
        for i in range(KH):
            for j in range(KW):
                patch = xp[:, g * Cg:(g + 1) * Cg, i * dh:i * dh + sh * OH:sh, j * dw:j * dw + sw * OW:sw]
                out[:, o] += np.einsum("nchw,c->nhw", patch[:, :, :OH, :OW], w[o, :, i, j])
    return out + (b.reshape(1, -1, 1, 1) if b is not None else 0)


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1), dict(dilation=2, groups=2),
                                    dict(padding="same"), dict(padding="valid", bias=False),
                                    dict(kernel_size=(2, 3), padding="same", dilation=(1, 2))])
def test_conv2d(kwargs):
    need("conv2d")
    kwargs = dict(kwargs)
    conv = nn.Conv2d(4, 6, kwargs.pop("kernel_size", 3), **kwargs).double()
    x = arr(2, 4, 7, 6)
    b = npy(conv.bias) if conv.bias is not None else None
    if conv.padding == "same":
        # total padding dilation*(k-1) per dimension, the odd extra at the bottom/right
        totals = [d * (k - 1) for d, k in zip(conv.dilation, conv.kernel_size)]
        x_ref = np.pad(x, ((0, 0), (0, 0), (totals[0] // 2, totals[0] - totals[0] // 2),
                           (totals[1] // 2, totals[1] - totals[1] // 2)))
        ref = np_conv2d(x_ref, npy(conv.weight), b, conv.stride, (0, 0), conv.dilation, conv.groups)
        assert ref.shape[2:] == x.shape[2:]
    else:
        pad = (0, 0) if conv.padding == "valid" else conv.padding
        ref = np_conv2d(x, npy(conv.weight), b, conv.stride, pad, conv.dilation, conv.groups)
    close(conv(t64(x)), ref, rtol=1e-9, atol=1e-10)


def test_conv2d_init_and_grad():
    ember.manual_seed(0)
    conv = nn.Conv2d(8, 16, 3)
    bound = 1 / math.sqrt(8 * 9)
    assert np.abs(npy(conv.weight)).max() <= bound and np.abs(npy(conv.bias)).max() <= bound
    assert conv.weight.shape == (16, 8, 3, 3)
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3, groups=2)
    need("conv2d")
    check_layer_grad(nn.Conv2d(2, 2, 2, stride=1, padding=1), t64(arr(1, 2, 3, 3), True))


def test_conv1d():
    conv = nn.Conv1d(3, 4, 3, padding=1)
    assert conv.weight.shape == (4, 3, 3) and repr(conv) == "Conv1d(3, 4, kernel_size=(3,), stride=(1,), padding=(1,))"
    need("conv1d")
    conv.double()
    x = arr(2, 3, 8)
    ref = np_conv2d(x[:, :, None, :], npy(conv.weight)[:, :, None, :], npy(conv.bias), (1, 1), (0, 1), (1, 1), 1)
    close(conv(t64(x)), ref[:, :, 0, :], rtol=1e-9, atol=1e-10)


def np_conv_transpose2d(x, w, b, stride, padding, output_padding):
    N, C, H, W = x.shape
    _, O, KH, KW = w.shape
    sh, sw = stride
    OH = (H - 1) * sh + KH + output_padding[0]
    OW = (W - 1) * sw + KW + output_padding[1]
    full = np.zeros((N, O, OH, OW))
    for i in range(H):
        for j in range(W):
            full[:, :, i * sh:i * sh + KH, j * sw:j * sw + KW] += np.einsum("nc,cokl->nokl", x[:, :, i, j], w)
    # padding crops both edges; output_padding keeps extra rows/columns at the bottom/right
    ph, pw = padding
    out = full[:, :, ph:OH - ph, pw:OW - pw]
    return out + b.reshape(1, -1, 1, 1)


def test_conv_transpose2d():
    conv = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)
    assert conv.weight.shape == (3, 2, 3, 3)
    need("conv_transpose2d")
    conv.double()
    x = arr(2, 3, 4, 4)
    ref = np_conv_transpose2d(x, npy(conv.weight), npy(conv.bias), (2, 2), (1, 1), (1, 1))
    out = conv(t64(x))
    assert out.shape == (2, 2, 8, 8)
    close(out, ref, rtol=1e-9, atol=1e-10)



def test_conv_transpose2d_output_size():
    conv = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1).double()
    x = arr(2, 3, 4, 4)
    # Without output_padding the output is 7x7; stride 2 leaves one extra row/column reachable.
    assert conv(t64(x)).shape == (2, 2, 7, 7)
    for size in [(8, 7), [2, 2, 8, 7], ember.Size([7, 8]) if hasattr(ember, "Size") else (7, 8)]:
        out = conv(t64(x), output_size=size)
        pads = (out.shape[2] - 7, out.shape[3] - 7)
        assert tuple(out.shape[2:]) == tuple(size)[-2:]
        ref = np_conv_transpose2d(x, npy(conv.weight), npy(conv.bias), (2, 2), (1, 1), pads)
        close(out, ref, rtol=1e-9, atol=1e-10)
    assert conv(t64(x[0]), output_size=(3, 8, 8)).shape == (2, 8, 8)  # unbatched: channels + spatial
    with pytest.raises(ValueError, match=r"valid sizes range from \[7, 7\] to \[8, 8\]"):
        conv(t64(x), output_size=(9, 8))
    with pytest.raises(ValueError, match=r"valid sizes range"):
        conv(t64(x), output_size=(6, 7))
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        conv(t64(x), output_size=(8,))
    # output_size overrides the layer's own output_padding, as in torch.
    padded = nn.ConvTranspose2d(3, 2, 3, stride=3, output_padding=2).double()
    assert padded(t64(x)).shape == (2, 2, 14, 14)
    assert padded(t64(x), output_size=(12, 13)).shape == (2, 2, 12, 13)


def test_conv_transpose2d_output_size_matches_torch():
    torch = pytest.importorskip("torch")
    ember.manual_seed(5)
    conv = nn.ConvTranspose2d(2, 4, (3, 2), stride=(3, 2), padding=(1, 0), dilation=(1, 2), groups=2).double()
    theirs = torch.nn.ConvTranspose2d(2, 4, (3, 2), stride=(3, 2), padding=(1, 0), dilation=(1, 2), groups=2).double()
    theirs.load_state_dict({k: torch.from_numpy(npy(v).copy()) for k, v in conv.state_dict().items()})
    x = arr(1, 2, 3, 4)
    for size in [(7, 9), (9, 10), (8, 10)]:
        ref = theirs(torch.from_numpy(x), output_size=size).detach().numpy()
        close(conv(t64(x), output_size=size), ref, rtol=1e-9, atol=1e-10)

# ---- Pooling ------------------------------------------------------------------------------------

def test_max_pool2d():
    need("max_pool2d")
    x = arr(2, 3, 6, 6)
    ref = x.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5))
    close(nn.MaxPool2d(2)(t64(x)), ref)
    assert gradcheck(lambda t: nn.MaxPool2d(2)(t), [t64(x, True)])


def test_avg_pool2d():
    need("avg_pool2d")
    x = arr(2, 3, 6, 6)
    close(nn.AvgPool2d(2)(t64(x)), x.reshape(2, 3, 3, 2, 3, 2).mean(axis=(3, 5)), rtol=1e-10)
    assert gradcheck(lambda t: nn.AvgPool2d(3, stride=1)(t), [t64(x[:1, :1], True)])


def test_adaptive_avg_pool2d():
    need("adaptive_avg_pool2d")
    x = arr(2, 3, 5, 7)
    out_h, out_w = 2, 3
    ref = np.zeros((2, 3, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            h0, h1 = (i * 5) // out_h, -(-(i + 1) * 5 // out_h)
            w0, w1 = (j * 7) // out_w, -(-(j + 1) * 7 // out_w)
            ref[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    close(nn.AdaptiveAvgPool2d((2, 3))(t64(x)), ref, rtol=1e-10)
    close(nn.AdaptiveAvgPool2d(1)(t64(x)), x.mean(axis=(2, 3), keepdims=True), rtol=1e-10)


# ---- Normalization ------------------------------------------------------------------------------

def test_batch_norm2d_train_and_eval():
    bn = nn.BatchNorm2d(3)
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    need("batch_norm")
    bn.double()
    x = arr(4, 3, 2, 2)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    ref = (x - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5)
    close(bn(t64(x)), ref, rtol=1e-7, atol=1e-8)
    close(bn.running_mean, 0.1 * mean, rtol=1e-9)
    close(bn.running_var, 0.9 + 0.1 * x.var(axis=(0, 2, 3), ddof=1), rtol=1e-9)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    rm, rv = npy(bn.running_mean), npy(bn.running_var)
    close(bn(t64(x)), (x - rm.reshape(1, 3, 1, 1)) / np.sqrt(rv.reshape(1, 3, 1, 1) + 1e-5), rtol=1e-9)
    assert bn.num_batches_tracked.item() == 1
    bn.train()
    check_layer_grad(nn.BatchNorm2d(2, track_running_stats=False), t64(arr(3, 2, 2, 1), True))


def test_batch_norm1d():
    bn = nn.BatchNorm1d(4, affine=False, momentum=None)
    assert bn.weight is None and len(list(bn.parameters())) == 0
    need("batch_norm")
    x = arr(8, 4)
    close(bn(ember.tensor(x.astype(np.float32))), (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-4,
          atol=1e-5)
    close(bn.running_mean, x.mean(0), rtol=1e-5)  # momentum=None: cumulative average
    with pytest.raises(ValueError):
        bn(ember.zeros(2, 4, 3, 3))


def test_layer_norm():
    ln = nn.LayerNorm((3, 4))
    assert ln.weight.shape == (3, 4)
    need("layer_norm")
    ln.double()
    with ember.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-1, 1)
    x = arr(2, 3, 4)
    m, v = x.mean(axis=(1, 2), keepdims=True), x.var(axis=(1, 2), keepdims=True)
    close(ln(t64(x)), (x - m) / np.sqrt(v + 1e-5) * npy(ln.weight) + npy(ln.bias), rtol=1e-8, atol=1e-9)
    check_layer_grad(nn.LayerNorm(3), t64(arr(2, 3), True))


def test_group_norm():
    gn = nn.GroupNorm(2, 4)
    with pytest.raises(ValueError):
        nn.GroupNorm(3, 4)
    need("group_norm")
    gn.double()
    x = arr(2, 4, 3)
    g = x.reshape(2, 2, 6)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(2, 4, 3)
    close(gn(t64(x)), ref, rtol=1e-8, atol=1e-9)
    check_layer_grad(nn.GroupNorm(2, 4), t64(arr(1, 4, 2), True))


def test_rms_norm():
    rn = nn.RMSNorm(4, eps=1e-6)
    need("rms_norm")
    rn.double()
    x = arr(3, 4)
    close(rn(t64(x)), x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6), rtol=1e-8)
    check_layer_grad(nn.RMSNorm(3), t64(arr(2, 3), True))


# ---- Embedding ----------------------------------------------------------------------------------

def test_embedding():
    emb = nn.Embedding(10, 3, padding_idx=2)
    assert np.all(npy(emb.weight)[2] == 0) and np.any(npy(emb.weight)[3] != 0)
    need("embedding")
    idx = ember.tensor([[1, 2], [9, 1]])
    close(emb(idx), npy(emb.weight)[[[1, 2], [9, 1]]])
    emb(idx).sum().backward()
    g = npy(emb.weight.grad)
    assert np.all(g[2] == 0) and np.all(g[1] == 2) and np.all(g[9] == 1)
    pre = nn.Embedding.from_pretrained(ember.eye(4))
    assert not pre.weight.requires_grad
    close(pre(ember.tensor([3])), np.eye(4)[[3]])


# ---- Losses -------------------------------------------------------------------------------------

def _log_softmax(x):
    return x - np.log(np.exp(x).sum(1, keepdims=True))


def test_cross_entropy_and_nll_loss():
    need("cross_entropy", "nll_loss")
    x = arr(5, 4)
    y = np.array([0, 3, 1, 1, 2])
    ref = -_log_softmax(x)[np.arange(5), y].mean()
    close(nn.CrossEntropyLoss()(t64(x), ember.tensor(y)), ref, rtol=1e-10)
    close(nn.NLLLoss()(t64(_log_softmax(x)), ember.tensor(y)), ref, rtol=1e-10)
    close(nn.CrossEntropyLoss(reduction="sum")(t64(x), ember.tensor(y)), ref * 5, rtol=1e-10)
    assert gradcheck(lambda t: nn.CrossEntropyLoss()(t, ember.tensor(y)), [t64(x, True)])


def test_regression_losses():
    need("mse_loss", "l1_loss", "smooth_l1_loss")
    a, b = arr(3, 4), arr(3, 4)
    d = a - b
    close(nn.MSELoss()(t64(a), t64(b)), (d ** 2).mean(), rtol=1e-10)
    close(nn.L1Loss(reduction="sum")(t64(a), t64(b)), np.abs(d).sum(), rtol=1e-10)
    sl1 = np.where(np.abs(d) < 0.5, 0.5 * d ** 2 / 0.5, np.abs(d) - 0.25)
    close(nn.SmoothL1Loss(beta=0.5)(t64(a), t64(b)), sl1.mean(), rtol=1e-10)
    close(nn.MSELoss(reduction="none")(t64(a), t64(b)), d ** 2, rtol=1e-10)
    assert gradcheck(lambda u, v: nn.MSELoss()(u, v), [t64(a, True), t64(b, True)])


def test_binary_losses():
    need("binary_cross_entropy", "binary_cross_entropy_with_logits")
    logits = arr(4, 3)
    p = 1 / (1 + np.exp(-logits))
    y = (RNG.random((4, 3)) > 0.5).astype(np.float64)
    ref = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
    close(nn.BCELoss()(t64(p), t64(y)), ref, rtol=1e-9)
    close(nn.BCEWithLogitsLoss()(t64(logits), t64(y)), ref, rtol=1e-9)
    assert gradcheck(lambda t: nn.BCEWithLogitsLoss()(t, t64(y)), [t64(logits, True)])


def test_kl_div_loss():
    need("kl_div")
    logq = _log_softmax(arr(3, 4))
    p = np.exp(_log_softmax(arr(3, 4)))
    close(nn.KLDivLoss(reduction="batchmean")(t64(logq), t64(p)), (p * (np.log(p) - logq)).sum() / 3,
          rtol=1e-9)
    close(nn.KLDivLoss(reduction="sum", log_target=True)(t64(logq), t64(np.log(p))),
          (p * (np.log(p) - logq)).sum(), rtol=1e-9)


@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_conv_padding_modes(mode, np_mode):
    ember.manual_seed(0)
    conv = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode).double()
    plain = nn.Conv2d(2, 3, 3).double()  # padding 0, same weights
    plain.load_state_dict(conv.state_dict())
    x = arr(2, 2, 5, 6)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode=np_mode)
    close(conv(t64(x)), plain(t64(padded)).detach().numpy())
    assert "padding_mode=" + mode in repr(conv)
    assert gradcheck(lambda t: conv(t), [t64(arr(1, 2, 4, 5), True)])


def test_conv_padding_mode_errors():
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect")


# ---- pickling and deep-copying whole models -----------------------------------------------------

def _small_model():
    ember.manual_seed(6)
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3))


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_models_pickle_and_deepcopy(how):
    import copy
    import pickle
    model = _small_model()
    x = ember.randn(2, 1, 4, 4)
    model(x)  # running stats move off their initial values
    model.eval()
    clone = pickle.loads(pickle.dumps(model)) if how == "pickle" else copy.deepcopy(model)
    assert type(clone) is nn.Sequential and not clone.training
    assert [type(p) for p in clone.parameters()] == [nn.Parameter] * len(list(model.parameters()))
    assert list(clone.state_dict()) == list(model.state_dict())
    for (name, a), b in zip(model.state_dict().items(), clone.state_dict().values()):
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(npy(a), npy(b), err_msg=name)
    close(clone(x), npy(model(x)), rtol=0, atol=0)
    # The copy owns its tensors: training it leaves the original alone.
    before = npy(model[4].weight).copy()
    clone.train()
    clone(x).sum().backward()
    with ember.no_grad():
        clone[4].weight.sub_(clone[4].weight.grad)
    np.testing.assert_array_equal(npy(model[4].weight), before)
    assert model[4].weight.grad is None


def test_hardtanh_refuses_min_above_max():
    with pytest.raises(ValueError, match=r"hardtanh: min_val cannot be greater than max_val \(got 2.0 > 1.0\)"):
        F.hardtanh(ember.ones(3), 2.0, 1.0)
    assert F.hardtanh(ember.tensor([-3.0, 0.5, 3.0]), 1.0, 1.0).tolist() == [1.0, 1.0, 1.0]  # equal bounds are fine
