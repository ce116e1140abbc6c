"""nn.RNN / LSTM / GRU, their cells and nn.utils.rnn.pad_sequence: against a numpy reference (always),
against torch with copied weights (when torch is importable), gradcheck in float64, torch's parameter
names, shapes and init, and bad input."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.autograd import gradcheck
from ember.nn.utils.rnn import (PackedSequence, invert_permutation, pack_padded_sequence, pack_sequence,
                                pad_packed_sequence, pad_sequence, unpack_sequence, unpad_sequence)
from harness import torch

RNG = np.random.default_rng(7)
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")


def npy(t):
    return t.detach().numpy()


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


# ---- a numpy reference of the multi-layer, bidirectional recurrences ---------------------------------

def np_step(mode, x, state, w_ih, w_hh, b_ih, b_hh, w_hr=None):
    xp = x @ w_ih.T + (b_ih if b_ih is not None else 0)
    hp = lambda h: h @ w_hh.T + (b_hh if b_hh is not None else 0)  # noqa: E731
    if mode in ("tanh", "relu"):
        pre = xp + hp(state)
        return np.tanh(pre) if mode == "tanh" else np.maximum(pre, 0)
    if mode == "LSTM":
        h, c = state
        i, f, g, o = np.split(xp + hp(h), 4, -1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        return (h @ w_hr.T if w_hr is not None else h), c
    h = state
    xr, xz, xn = np.split(xp, 3, -1)
    hr, hz, hn = np.split(hp(h), 3, -1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return (1 - z) * n + z * h


def np_run(mode, module, x, states):
    """x [T, N, in]; states: one per layer/direction. Returns (output, final states)."""
    dirs = 2 if module.bidirectional else 1
    finals = []
    for layer in range(module.num_layers):
        outs = []
        for d in range(dirs):
            suffix = f"_l{layer}" + ("_reverse" if d else "")
            w = [getattr(module, n + suffix, None) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh",
                                                              "weight_hr")]
            w = [None if t is None else npy(t) for t in w]
            state = states[layer * dirs + d]
            hs = [None] * x.shape[0]
            for t in (range(x.shape[0]) if d == 0 else reversed(range(x.shape[0]))):
                state = np_step(mode, x[t], state, *w)
                hs[t] = state[0] if isinstance(state, tuple) else state
            finals.append(state)
            outs.append(np.stack(hs, 0))
        x = np.concatenate(outs, -1)
    return x, finals


def make(cls, *args, **kwargs):
    return getattr(nn, cls)(*args, **kwargs).double()


MODES = [("RNN", "tanh", {}), ("RNN", "relu", {"nonlinearity": "relu"}), ("LSTM", "LSTM", {}),
         ("GRU", "GRU", {}), ("LSTM", "LSTM", {"proj_size": 2})]
MODE_IDS = ["rnn_tanh", "rnn_relu", "lstm", "gru", "lstm_proj"]


@pytest.mark.parametrize("cls,mode,kw", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("batch_first", [False, True])
def test_matches_numpy_two_layers_bidirectional_with_initial_state(cls, mode, kw, batch_first):
    m = make(cls, 3, 4, num_layers=2, bidirectional=True, batch_first=batch_first, **kw)
    T, N = 5, 2
    x = RNG.standard_normal((T, N, 3))
    out_width = kw.get("proj_size", 4)
    h0 = RNG.standard_normal((4, N, out_width))
    c0 = RNG.standard_normal((4, N, 4))
    hx = (ember.tensor(h0), ember.tensor(c0)) if mode == "LSTM" else ember.tensor(h0)
    x_in = ember.tensor(np.swapaxes(x, 0, 1).copy() if batch_first else x)
    out, h_n = m(x_in, hx)
    states = list(zip(h0, c0)) if mode == "LSTM" else list(h0)
    ref_out, ref_finals = np_run(mode, m, x, states)
    if batch_first:
        ref_out = np.swapaxes(ref_out, 0, 1)
    assert tuple(out.shape) == ref_out.shape
    np.testing.assert_allclose(npy(out), ref_out, rtol=1e-10, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(npy(h_n[0]), np.stack([h for h, _ in ref_finals]), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(npy(h_n[1]), np.stack([c for _, c in ref_finals]), rtol=1e-10, atol=1e-12)
    else:
        np.testing.assert_allclose(npy(h_n), np.stack(ref_finals), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls,mode,kw", MODES[:4], ids=MODE_IDS[:4])
def test_default_state_is_zeros_and_unbatched_equals_batch_of_one(cls, mode, kw):
    m = make(cls, 3, 4, num_layers=2, **kw)
    x = ember.tensor(RNG.standard_normal((6, 3)))
    out_u, h_u = m(x)
    out_b, h_b = m(x.unsqueeze(1))
    assert tuple(out_u.shape) == (6, 4)
    np.testing.assert_allclose(npy(out_u), npy(out_b.squeeze(1)), rtol=0, atol=0)
    zeros = ember.zeros(2, 1, 4, dtype=ember.float64)
    out_z, _ = m(x.unsqueeze(1), (zeros, zeros) if mode == "LSTM" else zeros)
    np.testing.assert_allclose(npy(out_z), npy(out_b), rtol=0, atol=0)
    if mode == "LSTM":
        assert tuple(h_u[0].shape) == (2, 4) and tuple(h_u[1].shape) == (2, 4)
    else:
        assert tuple(h_u.shape) == (2, 4)


def test_parameter_names_shapes_and_init():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    names = [n for n, _ in m.named_parameters()]
    per = ["weight_ih_l{}{}", "weight_hh_l{}{}", "bias_ih_l{}{}", "bias_hh_l{}{}"]
    assert names == [p.format(l, s) for l in range(2) for s in ("", "_reverse") for p in per]
    assert tuple(m.weight_ih_l0.shape) == (20, 3)
    assert tuple(m.weight_ih_l1.shape) == (20, 10)
    assert tuple(m.weight_hh_l1_reverse.shape) == (20, 5)
    assert tuple(m.bias_hh_l0.shape) == (20,)
    bound = 1 / math.sqrt(5)
    for p in m.parameters():
        a = npy(p)
        assert a.min() >= -bound and a.max() <= bound and a.std() > bound / 4
    g = nn.GRU(3, 4, bias=False)
    assert [n for n, _ in g.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    assert tuple(g.weight_ih_l0.shape) == (12, 3)
    r = nn.RNN(3, 4, 1, "relu")
    assert r.nonlinearity == "relu" and tuple(r.weight_hh_l0.shape) == (4, 4)
    p = nn.LSTM(3, 5, proj_size=2)
    assert tuple(p.weight_hr_l0.shape) == (2, 5) and tuple(p.weight_hh_l0.shape) == (20, 2)
    assert len(m.all_weights) == 4 and len(m.all_weights[0]) == 4


def test_dropout_between_layers_only_in_training():
    ember.manual_seed(0)
    m = make("GRU", 3, 4, num_layers=2, dropout=1.0)
    x = ember.tensor(RNG.standard_normal((4, 2, 3)))
    plain = make("GRU", 3, 4, num_layers=2)
    plain.load_state_dict(m.state_dict())
    m.eval()
    np.testing.assert_allclose(npy(m(x)[0]), npy(plain(x)[0]), rtol=0, atol=0)
    m.train()
    # p = 1 zeroes the second layer's input: its output no longer depends on x.
    y1 = m(x)[0]
    y2 = m(x * 3.0)[0]
    np.testing.assert_allclose(npy(y1), npy(y2), rtol=0, atol=0)
    assert not np.allclose(npy(y1), npy(plain(x)[0]))


# ---- cells -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls,mode", [("RNNCell", "tanh"), ("LSTMCell", "LSTM"), ("GRUCell", "GRU")])
def test_cells_match_numpy(cls, mode):
    cell = make(cls, 3, 4)
    x = RNG.standard_normal((2, 3))
    h = RNG.standard_normal((2, 4))
    c = RNG.standard_normal((2, 4))
    w = [npy(cell.weight_ih), npy(cell.weight_hh), npy(cell.bias_ih), npy(cell.bias_hh)]
    if mode == "LSTM":
        got = cell(ember.tensor(x), (ember.tensor(h), ember.tensor(c)))
        ref = np_step(mode, x, (h, c), *w)
        for g, r in zip(got, ref):
            np.testing.assert_allclose(npy(g), r, rtol=1e-12, atol=1e-12)
        h1, c1 = cell(ember.tensor(x[0]))  # unbatched, zero state
        ref = np_step(mode, x[:1], (np.zeros((1, 4)), np.zeros((1, 4))), *w)
        np.testing.assert_allclose(npy(h1), ref[0][0], rtol=1e-12, atol=1e-12)
        assert tuple(c1.shape) == (4,)
    else:
        got = cell(ember.tensor(x), ember.tensor(h))
        np.testing.assert_allclose(npy(got), np_step(mode, x, h, *w), rtol=1e-12, atol=1e-12)
        got1 = cell(ember.tensor(x[0]))
        np.testing.assert_allclose(npy(got1), np_step(mode, x[:1], np.zeros((1, 4)), *w)[0], rtol=1e-12,
                                   atol=1e-12)


def test_relu_cell_and_no_bias_cell():
    cell = make("RNNCell", 3, 4, bias=False, nonlinearity="relu")
    assert cell.bias_ih is None and len(list(cell.parameters())) == 2
    x, h = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4))
    ref = np_step("relu", x, h, npy(cell.weight_ih), npy(cell.weight_hh), None, None)
    np.testing.assert_allclose(npy(cell(ember.tensor(x), ember.tensor(h))), ref, rtol=1e-12, atol=1e-12)


# ---- gradients ---------------------------------------------------------------------------------------

def gradcheck_module(module, inputs):
    """gradcheck w.r.t. the inputs and every parameter, swapping each Parameter for a leaf."""
    names = [n for n, _ in module.named_parameters()]
    leaves = [p.detach().clone().requires_grad_(True) for p in module.parameters()]
    originals = dict(module._parameters)

    def fn(*args):
        for name, value in zip(names, args[len(inputs):]):
            module._parameters[name] = value
        try:
            out, state = module(*args[:len(inputs)]) if len(inputs) == 1 else \
                module(args[0], tuple(args[1:len(inputs)]) if len(inputs) > 2 else args[1])
        finally:
            module._parameters.update(originals)
        flat = list(state) if isinstance(state, tuple) else [state]
        return tuple([out] + flat)

    assert gradcheck(fn, list(inputs) + leaves)


def leaf(*shape):
    return ember.tensor(RNG.standard_normal(shape)).requires_grad_(True)


def test_gradcheck_lstm():
    m = make("LSTM", 2, 3, bidirectional=True)
    gradcheck_module(m, [leaf(3, 2, 2), leaf(2, 2, 3), leaf(2, 2, 3)])


def test_gradcheck_gru():
    m = make("GRU", 2, 3, num_layers=2, batch_first=True)
    gradcheck_module(m, [leaf(2, 3, 2), leaf(2, 2, 3)])


def test_gradcheck_rnn_relu_and_lstm_proj():
    gradcheck_module(make("RNN", 2, 3, nonlinearity="relu"), [leaf(3, 2, 2)])
    gradcheck_module(make("LSTM", 2, 3, proj_size=2), [leaf(2, 1, 2)])


# ---- errors ------------------------------------------------------------------------------------------

def test_bad_input():
    m = nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(ValueError, match="2D or 3D"):
        m(ember.zeros(1, 2, 3, 3))
    with pytest.raises(RuntimeError, match="input_size"):
        m(ember.zeros(5, 2, 4))
    with pytest.raises(RuntimeError, match="hidden size"):
        m(ember.zeros(5, 2, 3), (ember.zeros(1, 2, 4), ember.zeros(2, 2, 4)))
    with pytest.raises(RuntimeError, match="cell size"):
        m(ember.zeros(5, 2, 3), (ember.zeros(2, 2, 4), ember.zeros(2, 3, 4)))
    with pytest.raises(RuntimeError, match="2-D"):
        m(ember.zeros(5, 3), (ember.zeros(2, 1, 4), ember.zeros(2, 1, 4)))
    with pytest.raises(RuntimeError, match="hidden size"):
        nn.GRU(3, 4)(ember.zeros(5, 2, 3), ember.zeros(1, 3, 4))
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="proj_size"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="dropout"):
        nn.LSTM(3, 4, dropout=1.5)
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)
    with pytest.raises(RuntimeError, match="GRUCell"):
        nn.GRUCell(3, 4)(ember.zeros(2, 5))
    with pytest.raises(RuntimeError, match="hidden"):
        nn.GRUCell(3, 4)(ember.zeros(2, 3), ember.zeros(3, 4))


def test_trains():
    ember.manual_seed(0)
    m = nn.LSTM(2, 8, batch_first=True)
    head = nn.Linear(8, 1)
    x = ember.tensor(RNG.standard_normal((16, 5, 2)).astype(np.float32))
    y = x.sum(1)[:, :1]  # the running sum of the first feature... of every step
    opt = ember.optim.Adam(list(m.parameters()) + list(head.parameters()), lr=0.05)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        out, _ = m(x)
        loss = ((head(out[:, -1]) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.3 * losses[0]


# ---- pad_sequence ------------------------------------------------------------------------------------

def test_pad_sequence():
    a, b, c = (RNG.standard_normal((n, 2)) for n in (3, 1, 2))
    seqs = [ember.tensor(s) for s in (a, b, c)]
    out = pad_sequence(seqs, padding_value=-1.0)
    ref = np.full((3, 3, 2), -1.0)
    for i, s in enumerate((a, b, c)):
        ref[:len(s), i] = s
    np.testing.assert_array_equal(npy(out), ref)
    out = pad_sequence(seqs, batch_first=True, padding_side="left")
    ref = np.zeros((3, 3, 2))
    for i, s in enumerate((a, b, c)):
        ref[i, 3 - len(s):] = s
    np.testing.assert_array_equal(npy(out), ref)
    for batch_first in (False, True):
        back = unpad_sequence(pad_sequence(seqs, batch_first), ember.tensor([3, 1, 2]), batch_first)
        for got, want in zip(back, (a, b, c)):
            np.testing.assert_array_equal(npy(got), want)
    leaves = [ember.tensor(s).requires_grad_(True) for s in (a, b)]
    assert gradcheck(lambda x, y: pad_sequence([x, y], batch_first=True), leaves)
    with pytest.raises(ValueError, match="padding_side"):
        pad_sequence(seqs, padding_side="middle")
    with pytest.raises(RuntimeError, match="pad_sequence"):
        pad_sequence([ember.zeros(2, 3), ember.zeros(2, 4)])


# ---- packed sequences ---------------------------------------------------------------------------------

def test_pack_and_pad_roundtrip():
    lengths = [2, 4, 1]
    x = RNG.standard_normal((4, 3, 2))
    packed = pack_padded_sequence(ember.tensor(x), lengths, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 2, 1, 1]
    assert packed.sorted_indices.tolist() == [1, 0, 2] and packed.unsorted_indices.tolist() == [1, 0, 2]
    # step 0 of sequences 1, 0, 2; step 1 of 1, 0; step 2 of 1; step 3 of 1
    expected = np.stack([x[0, 1], x[0, 0], x[0, 2], x[1, 1], x[1, 0], x[2, 1], x[3, 1]])
    np.testing.assert_array_equal(npy(packed.data), expected)
    padded, got_lengths = pad_packed_sequence(packed, batch_first=True, padding_value=-1.0, total_length=5)
    assert got_lengths.tolist() == lengths and tuple(padded.shape) == (3, 5, 2)
    for b, n in enumerate(lengths):
        np.testing.assert_array_equal(npy(padded[b, :n]), x[:n, b])
        assert np.all(npy(padded[b, n:]) == -1.0)
    seqs = [ember.tensor(x[:n, b]) for b, n in enumerate(lengths)]
    for got, want in zip(unpack_sequence(pack_sequence(seqs, enforce_sorted=False)), seqs):
        np.testing.assert_array_equal(npy(got), npy(want))
    sorted_pack = pack_sequence([seqs[1], seqs[0], seqs[2]])
    assert sorted_pack.sorted_indices is None
    np.testing.assert_array_equal(npy(sorted_pack.data), expected)
    leaf = ember.tensor(x).requires_grad_(True)
    assert gradcheck(lambda t: pack_padded_sequence(t, lengths, enforce_sorted=False).data, [leaf])


def test_pack_errors():
    x = ember.zeros(4, 3, 2)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        pack_padded_sequence(x, [2, 4, 1])
    with pytest.raises(RuntimeError, match="greater than 0"):
        pack_padded_sequence(x, [4, 2, 0])
    with pytest.raises(RuntimeError, match="lengths"):
        pack_padded_sequence(x, [4, 2])
    with pytest.raises(ValueError, match="total_length"):
        pad_packed_sequence(pack_padded_sequence(x, [4, 2, 1]), total_length=3)


@pytest.mark.parametrize("cls,mode,kw", MODES[2:], ids=MODE_IDS[2:])
def test_packed_input_matches_each_sequence_run_alone(cls, mode, kw):
    m = make(cls, 2, 3, num_layers=2, bidirectional=True, **kw)
    lengths = [3, 5, 1, 4]
    x = RNG.standard_normal((5, 4, 2))
    width = kw.get("proj_size", 3)
    h0 = RNG.standard_normal((4, 4, width))
    c0 = RNG.standard_normal((4, 4, 3))
    hx = (ember.tensor(h0), ember.tensor(c0)) if mode == "LSTM" else ember.tensor(h0)
    out, h_n = m(pack_padded_sequence(ember.tensor(x), lengths, enforce_sorted=False), hx)
    assert isinstance(out, PackedSequence)
    padded, _ = pad_packed_sequence(out)
    for b, n in enumerate(lengths):
        states = list(zip(h0[:, b:b + 1], c0[:, b:b + 1])) if mode == "LSTM" else list(h0[:, b:b + 1])
        ref_out, ref_finals = np_run(mode, m, x[:n, b:b + 1], states)
        np.testing.assert_allclose(npy(padded[:n, b]), ref_out[:, 0], rtol=1e-10, atol=1e-12)
        ref_h = np.stack([f[0] if mode == "LSTM" else f for f in ref_finals])[:, 0]
        np.testing.assert_allclose(npy(h_n[0] if mode == "LSTM" else h_n)[:, b], ref_h, rtol=1e-10, atol=1e-12)


# ---- torch parity (copied weights) ------------------------------------------------------------------

def copy_weights(tm, em):
    sd = {k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    assert list(sd) == list(em.state_dict())
    em.load_state_dict(sd)


def assert_same(e, t, rtol=1e-10, atol=1e-12, msg=""):
    np.testing.assert_allclose(npy(e), t.detach().numpy(), rtol=rtol, atol=atol, err_msg=msg)


TORCH_CONFIGS = [dict(), dict(batch_first=True, bidirectional=True), dict(num_layers=2, bidirectional=True),
                 dict(num_layers=2, bias=False)]


@needs_torch
@pytest.mark.parametrize("cls,mode,kw", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("config", TORCH_CONFIGS, ids=["plain", "bf_bi", "2l_bi", "2l_nobias"])
def test_torch_parity(cls, mode, kw, config):
    tm = getattr(torch.nn, cls)(3, 4, **kw, **config).double()
    em = make(cls, 3, 4, **kw, **config)
    copy_weights(tm, em)
    x = RNG.standard_normal((2, 5, 3))
    dirs = 2 if config.get("bidirectional") else 1
    h0 = RNG.standard_normal((config.get("num_layers", 1) * dirs, 2 if config.get("batch_first") else 5,
                              kw.get("proj_size", 4)))
    c0 = RNG.standard_normal(h0.shape[:2] + (4,))
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x).requires_grad_(True)
    th = torch.tensor(h0, requires_grad=True)
    eh = ember.tensor(h0).requires_grad_(True)
    if mode == "LSTM":
        (to, (thn, tcn)), (eo, (ehn, ecn)) = tm(tx, (th, torch.tensor(c0))), em(ex, (eh, ember.tensor(c0)))
        t_states, e_states = [thn, tcn], [ehn, ecn]
    else:
        (to, thn), (eo, ehn) = tm(tx, th), em(ex, eh)
        t_states, e_states = [thn], [ehn]
    assert_same(eo, to)
    for e, t in zip(e_states, t_states):
        assert_same(e, t)
    w = RNG.standard_normal(tuple(to.shape))
    (to * torch.tensor(w)).sum().add(sum((s ** 2).sum() for s in t_states)).backward()
    (eo * ember.tensor(w)).sum().add(sum((s ** 2).sum() for s in e_states)).backward()
    assert_same(ex.grad, tx.grad, 1e-9)
    assert_same(eh.grad, th.grad, 1e-9)
    for (name, tp), (_, ep) in zip(tm.named_parameters(), em.named_parameters()):
        assert_same(ep.grad, tp.grad, 1e-9, 1e-11, msg=name)


@needs_torch
@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
def test_torch_parity_cells(cls):
    tm = getattr(torch.nn, cls)(3, 4).double()
    em = make(cls, 3, 4)
    copy_weights(tm, em)
    x = RNG.standard_normal((2, 3))
    h = RNG.standard_normal((2, 4))
    t_state = (torch.tensor(h), torch.tensor(h * 0.5)) if cls == "LSTMCell" else torch.tensor(h)
    e_state = (ember.tensor(h), ember.tensor(h * 0.5)) if cls == "LSTMCell" else ember.tensor(h)
    t_out, e_out = tm(torch.tensor(x), t_state), em(ember.tensor(x), e_state)
    for e, t in zip(e_out if cls == "LSTMCell" else [e_out], t_out if cls == "LSTMCell" else [t_out]):
        assert_same(e, t)
    # unbatched: [in] and [hidden]
    t_state = tuple(s[0] for s in t_state) if cls == "LSTMCell" else t_state[0]
    e_state = tuple(s[0] for s in e_state) if cls == "LSTMCell" else e_state[0]
    t_out, e_out = tm(torch.tensor(x[0]), t_state), em(ember.tensor(x[0]), e_state)
    for e, t in zip(e_out if cls == "LSTMCell" else [e_out], t_out if cls == "LSTMCell" else [t_out]):
        assert tuple(e.shape) == tuple(t.shape)
        assert_same(e, t)


@needs_torch
def test_torch_parity_pad_sequence():
    seqs = [RNG.standard_normal((n, 2)) for n in (2, 4, 1)]
    for kw in (dict(), dict(batch_first=True, padding_value=3.0), dict(padding_side="left")):
        ref = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], **kw)
        assert_same(pad_sequence([ember.tensor(s) for s in seqs], **kw), ref, 0, 0)


@needs_torch
@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_torch_parity_packed(cls):
    tr = torch.nn.utils.rnn
    tm = getattr(torch.nn, cls)(2, 3, num_layers=2, bidirectional=True, batch_first=True).double()
    em = make(cls, 2, 3, num_layers=2, bidirectional=True, batch_first=True)
    copy_weights(tm, em)
    lengths = [3, 5, 1, 4]
    x = RNG.standard_normal((4, 5, 2))
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x).requires_grad_(True)
    to, th = tm(tr.pack_padded_sequence(tx, lengths, batch_first=True, enforce_sorted=False))
    eo, eh = em(pack_padded_sequence(ex, lengths, batch_first=True, enforce_sorted=False))
    assert_same(eo.data, to.data)
    assert eo.batch_sizes.tolist() == to.batch_sizes.tolist()
    assert eo.sorted_indices.tolist() == to.sorted_indices.tolist()
    t_states, e_states = (list(th), list(eh)) if cls == "LSTM" else ([th], [eh])
    for e, t in zip(e_states, t_states):
        assert_same(e, t)
    tpad, tlen = tr.pad_packed_sequence(to, batch_first=True)
    epad, elen = pad_packed_sequence(eo, batch_first=True)
    assert_same(epad, tpad)
    assert elen.tolist() == tlen.tolist()
    w = RNG.standard_normal(tuple(tpad.shape))
    ((tpad * torch.tensor(w)).sum() + sum(s.sum() for s in t_states)).backward()
    ((epad * ember.tensor(w)).sum() + sum(s.sum() for s in e_states)).backward()
    assert_same(ex.grad, tx.grad, 1e-9)


def test_invert_permutation():
    perm = RNG.permutation(7)
    inverse = invert_permutation(ember.tensor(perm))
    assert inverse.dtype == ember.int64
    np.testing.assert_array_equal(npy(inverse), np.argsort(perm))
    assert invert_permutation(None) is None
    assert invert_permutation(ember.tensor(np.zeros(0, dtype=np.int64))).shape == (0,)
    packed = pack_padded_sequence(ember.zeros(3, 4), [1, 3, 2, 2], enforce_sorted=False)
    np.testing.assert_array_equal(npy(invert_permutation(packed.sorted_indices)), npy(packed.unsorted_indices))
    with pytest.raises(RuntimeError, match="out of bounds"):
        invert_permutation(ember.tensor([2, 0, 3]))
    if torch is not None:
        np.testing.assert_array_equal(npy(inverse), torch.nn.utils.rnn.invert_permutation(torch.tensor(perm)).numpy())
