"""nn.TransformerEncoderLayer / TransformerEncoder / TransformerDecoderLayer / TransformerDecoder /
Transformer: against a numpy reference (always), against torch with copied state_dicts (when torch is
importable), gradcheck in float64, masks, and bad arguments."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.autograd import gradcheck
from harness import torch

RNG = np.random.default_rng(11)
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
E, H, FF = 8, 2, 12


def npy(t):
    return t.detach().numpy()


# ---- numpy reference ----------------------------------------------------------------------------------

def np_layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def np_gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def np_mha(attn, q, k, v, mask):
    """q [L, N, E], k/v [S, N, E]; mask additive, broadcastable to [N, H, L, S]."""
    w, b = npy(attn.in_proj_weight), npy(attn.in_proj_bias)
    wq, wk, wv = np.split(w, 3)
    bq, bk, bv = np.split(b, 3)
    L, N, _ = q.shape
    S = k.shape[0]
    D = E // H
    heads = lambda x, n: (x.reshape(n, N, H, D).transpose(1, 2, 0, 3))  # noqa: E731
    qh, kh, vh = heads(q @ wq.T + bq, L), heads(k @ wk.T + bk, S), heads(v @ wv.T + bv, S)
    s = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(D) + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = (p @ vh).transpose(2, 0, 1, 3).reshape(L, N, E)
    return out @ npy(attn.out_proj.weight).T + npy(attn.out_proj.bias)


def np_ff(layer, x, act):
    h = x @ npy(layer.linear1.weight).T + npy(layer.linear1.bias)
    h = np.maximum(h, 0) if act == "relu" else np_gelu(h)
    return h @ npy(layer.linear2.weight).T + npy(layer.linear2.bias)


def norm(layer, i, x):
    m = getattr(layer, f"norm{i}")
    return np_layer_norm(x, npy(m.weight), npy(m.bias))


def np_encoder_layer(layer, x, mask, act, norm_first):
    sa = lambda y: np_mha(layer.self_attn, y, y, y, mask)  # noqa: E731
    if norm_first:
        x = x + sa(norm(layer, 1, x))
        return x + np_ff(layer, norm(layer, 2, x), act)
    x = norm(layer, 1, x + sa(x))
    return norm(layer, 2, x + np_ff(layer, x, act))


def np_decoder_layer(layer, x, mem, tgt_mask, mem_mask, act, norm_first):
    sa = lambda y: np_mha(layer.self_attn, y, y, y, tgt_mask)  # noqa: E731
    ca = lambda y: np_mha(layer.multihead_attn, y, mem, mem, mem_mask)  # noqa: E731
    if norm_first:
        x = x + sa(norm(layer, 1, x))
        x = x + ca(norm(layer, 2, x))
        return x + np_ff(layer, norm(layer, 3, x), act)
    x = norm(layer, 1, x + sa(x))
    x = norm(layer, 2, x + ca(x))
    return norm(layer, 3, x + np_ff(layer, x, act))


def causal_np(n):
    return np.triu(np.full((n, n), -np.inf), 1)


def randomize(module):
    """Non-trivial values for every parameter (LayerNorm weights and biases included)."""
    with ember.no_grad():
        for p in module.parameters():
            p.copy_(ember.tensor(RNG.uniform(-0.5, 0.5, tuple(p.shape))).to(p.dtype))
    return module


def as_sequence_first(x, batch_first):
    return np.swapaxes(x, 0, 1) if batch_first else x


@pytest.mark.parametrize("act", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_matches_numpy(act, norm_first, batch_first):
    layer = randomize(nn.TransformerEncoderLayer(E, H, FF, dropout=0.1, activation=act, norm_first=norm_first,
                                                 batch_first=batch_first).double()).eval()
    L, N = 4, 3
    x = RNG.standard_normal((L, N, E))
    kpm = np.zeros((N, L), bool)
    kpm[1, -2:] = True
    out = layer(ember.tensor(as_sequence_first(x, batch_first).copy()),
                src_mask=ember.tensor(causal_np(L)), src_key_padding_mask=ember.tensor(kpm))
    mask = causal_np(L)[None, None] + np.where(kpm, -np.inf, 0.0)[:, None, None, :]
    ref = np_encoder_layer(layer, x, mask, act, norm_first)
    np.testing.assert_allclose(npy(out), as_sequence_first(ref, batch_first), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_numpy(norm_first):
    layer = randomize(nn.TransformerDecoderLayer(E, H, FF, activation="gelu", norm_first=norm_first).double())
    layer.eval()
    T, S, N = 3, 5, 2
    tgt, mem = RNG.standard_normal((T, N, E)), RNG.standard_normal((S, N, E))
    mem_kpm = np.zeros((N, S), bool)
    mem_kpm[0, 0] = True
    out = layer(ember.tensor(tgt), ember.tensor(mem), tgt_mask=ember.tensor(causal_np(T)),
                memory_key_padding_mask=ember.tensor(mem_kpm), tgt_is_causal=True)
    ref = np_decoder_layer(layer, tgt, mem, causal_np(T), np.where(mem_kpm, -np.inf, 0.0)[:, None, None, :],
                           "gelu", norm_first)
    np.testing.assert_allclose(npy(out), ref, rtol=1e-9, atol=1e-10)


def test_encoder_stacks_independent_copies_and_applies_norm():
    layer = randomize(nn.TransformerEncoderLayer(E, H, FF, dropout=0.0).double())
    enc = nn.TransformerEncoder(layer, 2, norm=randomize(nn.LayerNorm(E).double()))
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    randomize(enc.layers[1])  # the copies are independent: changing one changes only its own layer
    assert not np.allclose(npy(enc.layers[0].linear1.weight), npy(enc.layers[1].linear1.weight))
    keys = list(enc.state_dict())
    assert keys[:4] == ["layers.0.self_attn.in_proj_weight", "layers.0.self_attn.in_proj_bias",
                        "layers.0.self_attn.out_proj.weight", "layers.0.self_attn.out_proj.bias"]
    assert keys[-2:] == ["norm.weight", "norm.bias"]
    x = RNG.standard_normal((4, 2, E))
    ref = x
    for sub in enc.layers:
        ref = np_encoder_layer(sub, ref, 0.0, "relu", False)
    ref = np_layer_norm(ref, npy(enc.norm.weight), npy(enc.norm.bias))
    np.testing.assert_allclose(npy(enc(ember.tensor(x))), ref, rtol=1e-9, atol=1e-10)


def test_transformer_matches_numpy_and_masks():
    model = randomize(nn.Transformer(E, H, 1, 1, FF, dropout=0.0).double())
    S, T, N = 4, 3, 2
    src, tgt = RNG.standard_normal((S, N, E)), RNG.standard_normal((T, N, E))
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(T, dtype=ember.float64)
    out = model(ember.tensor(src), ember.tensor(tgt), tgt_mask=tgt_mask)
    enc, dec = model.encoder, model.decoder
    mem = np_encoder_layer(enc.layers[0], src, 0.0, "relu", False)
    mem = np_layer_norm(mem, npy(enc.norm.weight), npy(enc.norm.bias))
    ref = np_decoder_layer(dec.layers[0], tgt, mem, causal_np(T), 0.0, "relu", False)
    ref = np_layer_norm(ref, npy(dec.norm.weight), npy(dec.norm.bias))
    np.testing.assert_allclose(npy(out), ref, rtol=1e-9, atol=1e-10)


def test_generate_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(4)
    assert m.dtype == ember.float32 and tuple(m.shape) == (4, 4)
    np.testing.assert_array_equal(npy(m), causal_np(4).astype(np.float32))


def test_transformer_init_is_xavier_uniform():
    ember.manual_seed(0)
    model = nn.Transformer(16, 2, 1, 1, 32)
    w = npy(model.encoder.layers[0].linear1.weight)
    bound = math.sqrt(6 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.all(npy(model.decoder.norm.weight) == 1)


def test_callable_activation_and_dropout_in_training():
    layer = nn.TransformerEncoderLayer(E, H, FF, dropout=0.5, activation=nn.GELU()).double()
    ref = nn.TransformerEncoderLayer(E, H, FF, dropout=0.5, activation="gelu").double()
    ref.load_state_dict(layer.state_dict())
    x = ember.tensor(RNG.standard_normal((3, 2, E)))
    layer.eval(), ref.eval()
    np.testing.assert_allclose(npy(layer(x)), npy(ref(x)), rtol=0, atol=0)
    layer.train()
    ember.manual_seed(1)
    a = layer(x)
    ember.manual_seed(2)
    b = layer(x)
    assert not np.allclose(npy(a), npy(b))


def test_gradcheck_encoder_and_decoder_layers():
    enc = randomize(nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0).double())
    dec = randomize(nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, norm_first=True).double())
    x = ember.tensor(RNG.standard_normal((3, 2, 4))).requires_grad_(True)
    mem = ember.tensor(RNG.standard_normal((2, 2, 4))).requires_grad_(True)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
    assert gradcheck(lambda a: enc(a, src_mask=mask), [x])
    assert gradcheck(lambda a, m: dec(a, m, tgt_mask=mask), [x, mem])


def test_parameters_get_gradients():
    model = nn.Transformer(E, H, 1, 1, FF, dropout=0.0, batch_first=True)
    out = model(ember.randn(2, 4, E), ember.randn(2, 3, E))
    out.square().sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="relu/gelu"):
        nn.TransformerEncoderLayer(E, H, activation="tanh")
    model = nn.Transformer(E, H, 1, 1, FF)
    with pytest.raises(RuntimeError, match="batch number"):
        model(ember.randn(4, 2, E), ember.randn(3, 3, E))
    with pytest.raises(RuntimeError, match="d_model"):
        model(ember.randn(4, 2, E), ember.randn(3, 2, E + 1))
    layer = nn.TransformerEncoderLayer(E, H, FF)
    with pytest.raises(RuntimeError, match="is_causal"):
        layer(ember.randn(4, 2, E), is_causal=True)
    with pytest.raises(AssertionError, match="divisible"):
        nn.TransformerEncoderLayer(E, 3)


# ---- torch parity (copied state_dicts; torch with grad enabled, so it takes its plain path) --------

def copy_state(tm, em):
    sd = {k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    assert list(sd) == list(em.state_dict())
    em.load_state_dict(sd)


def assert_same(e, t, rtol=1e-9, atol=1e-10, msg=""):
    np.testing.assert_allclose(npy(e), t.detach().numpy(), rtol=rtol, atol=atol, err_msg=msg)


@needs_torch
@pytest.mark.parametrize("config", [dict(), dict(norm_first=True, activation="gelu"), dict(batch_first=True),
                                    dict(bias=False, layer_norm_eps=1e-3)],
                         ids=["plain", "prenorm_gelu", "batch_first", "nobias"])
def test_torch_parity_encoder(config):
    tl = torch.nn.TransformerEncoderLayer(E, H, FF, **config).double()
    te = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(E).double(), enable_nested_tensor=False)
    ee = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, FF, **config), 2, norm=nn.LayerNorm(E)).double()
    copy_state(te, ee)
    te.eval(), ee.eval()
    x = RNG.standard_normal((3, 4, E))
    bf = config.get("batch_first", False)
    L, N = (4, 3) if bf else (3, 4)
    kpm = np.zeros((N, L), bool)
    kpm[0, -1] = True
    mask = causal_np(L)
    to = te(torch.tensor(x, requires_grad=True), mask=torch.tensor(mask),
            src_key_padding_mask=torch.tensor(kpm))
    eo = ee(ember.tensor(x), mask=ember.tensor(mask), src_key_padding_mask=ember.tensor(kpm))
    assert_same(eo, to)


@needs_torch
@pytest.mark.parametrize("norm_first", [False, True])
def test_torch_parity_transformer_outputs_and_gradients(norm_first):
    tm = torch.nn.Transformer(E, H, 2, 2, FF, dropout=0.0, batch_first=True, norm_first=norm_first).double()
    em = nn.Transformer(E, H, 2, 2, FF, dropout=0.0, batch_first=True, norm_first=norm_first).double()
    copy_state(tm, em)
    src, tgt = RNG.standard_normal((2, 5, E)), RNG.standard_normal((2, 4, E))
    tgt_kpm = np.zeros((2, 4), bool)
    tgt_kpm[1, -1] = True
    t_mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    e_mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64)
    ts, tt = torch.tensor(src, requires_grad=True), torch.tensor(tgt, requires_grad=True)
    es, et = ember.tensor(src).requires_grad_(True), ember.tensor(tgt).requires_grad_(True)
    to = tm(ts, tt, tgt_mask=t_mask, tgt_key_padding_mask=torch.tensor(tgt_kpm), tgt_is_causal=True)
    eo = em(es, et, tgt_mask=e_mask, tgt_key_padding_mask=ember.tensor(tgt_kpm), tgt_is_causal=True)
    assert_same(eo, to)
    w = RNG.standard_normal(tuple(to.shape))
    (to * torch.tensor(w)).sum().backward()
    (eo * ember.tensor(w)).sum().backward()
    assert_same(es.grad, ts.grad)
    assert_same(et.grad, tt.grad)
    for (name, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        assert_same(ep.grad, tp.grad, 1e-8, 1e-10, msg=name)


@needs_torch
def test_torch_parity_decoder_with_memory_mask():
    tl = torch.nn.TransformerDecoderLayer(E, H, FF).double()
    td = torch.nn.TransformerDecoder(tl, 2).eval()
    ed = nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, FF), 2).double().eval()
    copy_state(td, ed)
    tgt, mem = RNG.standard_normal((3, 2, E)), RNG.standard_normal((4, 2, E))
    mem_mask = RNG.random((3, 4)) > 0.7
    mem_mask[:, 0] = False  # every query keeps at least one key
    to = td(torch.tensor(tgt, requires_grad=True), torch.tensor(mem), memory_mask=torch.tensor(mem_mask))
    eo = ed(ember.tensor(tgt), ember.tensor(mem), memory_mask=ember.tensor(mem_mask))
    assert_same(eo, to)


def _encoder(batch_first=True, **kw):
    ember.manual_seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=batch_first, **kw)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=True)


def test_encoder_inference_with_padding_leaves_padded_positions_at_zero():
    # torch's inference fast path runs on nested tensors and pads its output with zeros; ember
    # computes the padded tensor and zeroes those positions under the same conditions.
    enc = _encoder().eval()
    x = ember.randn(2, 3, 8)
    pad = ember.tensor([[False, False, True], [False, False, False]])
    with ember.no_grad():
        out = enc(x, src_key_padding_mask=pad)
        additive = ember.where(pad, ember.tensor(float("-inf")), ember.tensor(0.0))
        reference = enc(x, src_key_padding_mask=additive)  # the float form of the same mask
    assert not out[0, 2].any() and out[0, :2].abs().sum() > 0 and out[1].abs().min() > 0
    np.testing.assert_allclose(reference.numpy(), out.numpy(), rtol=1e-6, atol=1e-6)
    # Not on that path: training, gradients flowing to the weights, padding that is not left-aligned.
    with_grad = enc(x, src_key_padding_mask=pad)
    assert with_grad[0, 2].abs().sum() > 0
    np.testing.assert_allclose(with_grad[0, :2].detach().numpy(), out[0, :2].numpy(), rtol=1e-5, atol=1e-6)
    with ember.no_grad():
        assert enc.train()(x, src_key_padding_mask=pad)[0, 2].abs().sum() > 0
        enc.eval()
        assert enc(x, src_key_padding_mask=ember.tensor([[True, False, False]] * 2))[0, 0].abs().sum() > 0


def test_encoder_says_why_it_takes_no_nested_fast_path():
    with pytest.warns(UserWarning, match="use_nested_tensor is False because .*batch_first was not True"):
        enc = _encoder(batch_first=False)
    assert not enc.use_nested_tensor
    with ember.no_grad():
        out = enc.eval()(ember.randn(3, 2, 8), src_key_padding_mask=ember.tensor([[False, False, True]] * 2))
    assert out[2, 0].abs().sum() > 0  # sequence-first layout: no zeroing


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
def test_encoder_inference_with_padding_matches_torch():
    enc = _encoder().eval()
    ref = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2)
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in enc.state_dict().items()})
    ref.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)
    pad = np.array([[False, False, True], [False, True, True]])
    with ember.no_grad(), torch.no_grad():
        got = enc(ember.tensor(x), src_key_padding_mask=ember.tensor(pad)).numpy()
        want = ref(torch.tensor(x), src_key_padding_mask=torch.tensor(pad)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
