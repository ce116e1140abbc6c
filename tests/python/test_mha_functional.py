"""F.multi_head_attention_forward: against a numpy reference (always) and torch's (when importable) with
packed and separate projections, masks, bias_kv, zero attention, static keys and values; gradcheck."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
RNG = np.random.default_rng(37)
CASES = []  # no OpCase rows: many arguments of different kinds

L, S, N, E, H = 4, 5, 2, 6, 2


def arrays():
    return dict(q=RNG.standard_normal((L, N, E)), k=RNG.standard_normal((S, N, E)), v=RNG.standard_normal((S, N, E)),
                w_in=RNG.standard_normal((3 * E, E)) * 0.3, b_in=RNG.standard_normal(3 * E) * 0.1,
                w_out=RNG.standard_normal((E, E)) * 0.3, b_out=RNG.standard_normal(E) * 0.1)


def np_mha(a, mask=None):
    """Project, split heads, softmax(q k^T / sqrt(d) + mask) v, merge, project out."""
    d = E // H
    q = a["q"] @ a["w_in"][:E].T + a["b_in"][:E]
    k = a["k"] @ a["w_in"][E:2 * E].T + a["b_in"][E:2 * E]
    v = a["v"] @ a["w_in"][2 * E:].T + a["b_in"][2 * E:]
    split = lambda x: x.reshape(x.shape[0], N, H, d).transpose(1, 2, 0, 3)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    if mask is not None:
        scores = scores + mask
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = (w @ v).transpose(2, 0, 1, 3).reshape(L, N, E)
    return out @ a["w_out"].T + a["b_out"], w.mean(1)


def call(mod, a, **kw):
    t = {k: mod.tensor(v) for k, v in a.items()}
    fn = mod.nn.functional.multi_head_attention_forward
    return fn(t["q"], t["k"], t["v"], E, H, t["w_in"], t["b_in"], None, None, False, 0.0, t["w_out"], t["b_out"],
              **kw)


def test_matches_numpy_with_and_without_a_mask():
    a = arrays()
    out, weights = call(ember, a)
    ref_out, ref_w = np_mha(a)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(weights.numpy(), ref_w, rtol=1e-10, atol=1e-12)
    causal = np.triu(np.full((L, S), -np.inf), 1)
    out, _ = call(ember, a, attn_mask=ember.tensor(causal), need_weights=False)
    np.testing.assert_allclose(out.numpy(), np_mha(a, causal)[0], rtol=1e-10, atol=1e-12)


def test_module_and_functional_agree():
    mha = ember.nn.MultiheadAttention(E, H, dtype=ember.float64)
    x = ember.tensor(RNG.standard_normal((L, N, E)))
    out_m, w_m = mha(x, x, x)
    out_f, w_f = F.multi_head_attention_forward(x, x, x, E, H, mha.in_proj_weight, mha.in_proj_bias, None, None,
                                                False, 0.0, mha.out_proj.weight, mha.out_proj.bias)
    np.testing.assert_array_equal(out_m.detach().numpy(), out_f.detach().numpy())
    np.testing.assert_array_equal(w_m.detach().numpy(), w_f.detach().numpy())


def test_gradcheck():
    a = arrays()
    q = ember.tensor(a["q"], requires_grad=True)
    w_in = ember.tensor(a["w_in"], requires_grad=True)
    k, v, b_in = ember.tensor(a["k"]), ember.tensor(a["v"]), ember.tensor(a["b_in"])
    w_out, b_out = ember.tensor(a["w_out"]), ember.tensor(a["b_out"])
    assert ember.autograd.gradcheck(
        lambda q_, w_: F.multi_head_attention_forward(q_, k, v, E, H, w_, b_in, None, None, True, 0.0, w_out, b_out)[0],
        [q, w_in])


def test_errors():
    a = arrays()
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8"):
        t = {k: ember.tensor(v) for k, v in a.items()}
        F.multi_head_attention_forward(t["q"], t["k"], t["v"], 8, H, t["w_in"], t["b_in"], None, None, False, 0.0,
                                       t["w_out"], t["b_out"])
    with pytest.raises(AssertionError, match="q_proj_weight"):
        t = {k: ember.tensor(v) for k, v in a.items()}
        F.multi_head_attention_forward(t["q"], t["k"], t["v"], E, H, None, None, None, None, False, 0.0, t["w_out"],
                                       t["b_out"], use_separate_proj_weight=True)


@needs_torch
@pytest.mark.parametrize("kw", [
    dict(), dict(need_weights=False), dict(average_attn_weights=False), dict(add_zero_attn=True),
    dict(bias_kv=True), dict(key_padding_mask=True), dict(bool_mask=True), dict(static=True), dict(separate=True),
])
def test_matches_torch(kw):
    a = arrays()
    results = []
    for mod in (torch, ember):
        t = {k: mod.tensor(v) for k, v in a.items()}
        args = dict(training=False, need_weights=kw.get("need_weights", True),
                    average_attn_weights=kw.get("average_attn_weights", True))
        bias_k = bias_v = None
        if kw.get("bias_kv"):
            bias_k, bias_v = mod.tensor(np.full((1, 1, E), 0.2)), mod.tensor(np.full((1, 1, E), -0.1))
        if kw.get("key_padding_mask"):
            args["key_padding_mask"] = mod.tensor(np.array([[False] * (S - 1) + [True], [False] * S]))
        if kw.get("bool_mask"):
            args["attn_mask"] = mod.tensor(np.triu(np.ones((L, S), dtype=bool), 1))
        if kw.get("static"):
            args["static_k"] = mod.tensor(RNG.standard_normal((N * H, S, E // H)) if mod is torch else results[0][2])
            args["static_v"] = mod.tensor(RNG.standard_normal((N * H, S, E // H)) if mod is torch else results[0][3])
        w_in = t["w_in"]
        if kw.get("separate"):
            args.update(use_separate_proj_weight=True, q_proj_weight=w_in[:E], k_proj_weight=w_in[E:2 * E],
                        v_proj_weight=w_in[2 * E:])
            w_in = None
        out, weights = mod.nn.functional.multi_head_attention_forward(
            t["q"], t["k"], t["v"], E, H, w_in, t["b_in"], bias_k, bias_v, kw.get("add_zero_attn", False), 0.0,
            t["w_out"], t["b_out"], **args)
        results.append((out.detach().numpy(), None if weights is None else weights.detach().numpy(),
                        args.get("static_k").numpy() if "static_k" in args else None,
                        args.get("static_v").numpy() if "static_v" in args else None))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-10, atol=1e-12)
    if results[0][1] is None:
        assert results[1][1] is None
    else:
        np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10, atol=1e-12)
