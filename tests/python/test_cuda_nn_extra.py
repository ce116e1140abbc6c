"""The Python-composed layers of test_nn_rnn / test_nn_transformer / test_nn_extra on CUDA against the
CPU path, forward and backward: LSTM and GRU (plain and packed), TransformerEncoderLayer and
Transformer, F.interpolate, pixel_shuffle.

Every test needs a CUDA GPU and skips, saying why, without one. The CPU is the reference: the
same weights and inputs are copied to the GPU and the outputs and gradients copied back.
"""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

RNG = np.random.default_rng(17)
TOL = {ember.float32: (1e-4, 1e-5), ember.float64: (1e-10, 1e-12)}


@pytest.fixture(autouse=True)
def full_float32_precision():
    before = ember.get_float32_matmul_precision()
    ember.set_float32_matmul_precision("highest")
    yield
    ember.set_float32_matmul_precision(before)


def as_np(t):
    return t.detach().cpu().to(ember.float64).numpy()


def both(module_fn, dtype):
    """The same module on the CPU and on the GPU (a copy of the CPU one's weights)."""
    cpu = module_fn().to(dtype)
    gpu = module_fn().to(dtype)
    gpu.load_state_dict(cpu.state_dict())
    return cpu, gpu.to("cuda")


def leaves(array, dtype):
    return [ember.tensor(array, dtype=dtype, device=d).requires_grad_(True) for d in ("cpu", "cuda")]


def compare(cpu, gpu, dtype, msg=""):
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(as_np(gpu), as_np(cpu), rtol=rtol, atol=atol, err_msg=msg)


def compare_grads(cpu_module, gpu_module, dtype):
    for (name, p), (_, q) in zip(cpu_module.named_parameters(), gpu_module.named_parameters()):
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            compare(p.grad, q.grad, dtype, name)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_recurrent_layers(cls, dtype):
    cpu, gpu = both(lambda: getattr(nn, cls)(3, 5, num_layers=2, bidirectional=True, batch_first=True), dtype)
    xc, xg = leaves(RNG.standard_normal((2, 6, 3)), dtype)
    (oc, hc), (og, hg) = cpu(xc), gpu(xg)
    assert og.is_cuda
    compare(oc, og, dtype, "output")
    for a, b in zip(hc if cls == "LSTM" else [hc], hg if cls == "LSTM" else [hg]):
        compare(a, b, dtype, "state")
    w = RNG.standard_normal(tuple(oc.shape))
    (oc * ember.tensor(w, dtype=dtype)).sum().backward()
    (og * ember.tensor(w, dtype=dtype, device="cuda")).sum().backward()
    compare(xc.grad, xg.grad, dtype, "input grad")
    compare_grads(cpu, gpu, dtype)


def test_packed_lstm():
    dtype = ember.float32
    cpu, gpu = both(lambda: nn.LSTM(2, 4, bidirectional=True), dtype)
    x = RNG.standard_normal((5, 3, 2))
    lengths = [2, 5, 3]
    xc, xg = leaves(x, dtype)
    oc, (hc, cc) = cpu(pack_padded_sequence(xc, lengths, enforce_sorted=False))
    og, (hg, cg) = gpu(pack_padded_sequence(xg, lengths, enforce_sorted=False))
    assert og.data.is_cuda
    compare(oc.data, og.data, dtype)
    compare(hc, hg, dtype)
    compare(cc, cg, dtype)
    pc, _ = pad_packed_sequence(oc)
    pg, _ = pad_packed_sequence(og)
    compare(pc, pg, dtype)
    (pc.square().sum() + hc.sum()).backward()
    (pg.square().sum() + hg.sum()).backward()
    compare(xc.grad, xg.grad, dtype)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer(norm_first):
    dtype = ember.float32
    cpu, gpu = both(lambda: nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation="gelu",
                                                       batch_first=True, norm_first=norm_first), dtype)
    xc, xg = leaves(RNG.standard_normal((2, 5, 16)), dtype)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    kpm = np.zeros((2, 5), bool)
    kpm[1, -2:] = True
    oc = cpu(xc, src_mask=mask, src_key_padding_mask=ember.tensor(kpm))
    og = gpu(xg, src_mask=mask.cuda(), src_key_padding_mask=ember.tensor(kpm, device="cuda"))
    compare(oc, og, dtype)
    oc.square().sum().backward()
    og.square().sum().backward()
    compare(xc.grad, xg.grad, dtype)
    compare_grads(cpu, gpu, dtype)


def test_transformer_eval():
    dtype = ember.float32
    cpu, gpu = both(lambda: nn.Transformer(16, 4, 2, 2, 32, batch_first=True), dtype)
    cpu.eval(), gpu.eval()
    src, tgt = RNG.standard_normal((2, 6, 16)), RNG.standard_normal((2, 4, 16))
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    oc = cpu(ember.tensor(src, dtype=dtype), ember.tensor(tgt, dtype=dtype), tgt_mask=mask)
    og = gpu(ember.tensor(src, dtype=dtype, device="cuda"), ember.tensor(tgt, dtype=dtype, device="cuda"),
             tgt_mask=mask.cuda())
    compare(oc, og, dtype)


@pytest.mark.parametrize("mode,kw", [("nearest", dict(scale_factor=2)), ("bilinear", dict(size=(5, 7))),
                                     ("bilinear", dict(scale_factor=0.5, align_corners=True)),
                                     ("area", dict(size=(2, 3)))])
def test_interpolate(mode, kw):
    dtype = ember.float64
    xc, xg = leaves(RNG.standard_normal((2, 3, 4, 6)), dtype)
    oc, og = F.interpolate(xc, mode=mode, **kw), F.interpolate(xg, mode=mode, **kw)
    compare(oc, og, dtype)
    w = RNG.standard_normal(tuple(oc.shape))
    (oc * ember.tensor(w, dtype=dtype)).sum().backward()
    (og * ember.tensor(w, dtype=dtype, device="cuda")).sum().backward()
    compare(xc.grad, xg.grad, dtype)


def test_pixel_shuffle_prelu_huber():
    dtype = ember.float32
    x = RNG.standard_normal((2, 8, 3, 3))
    xc, xg = leaves(x, dtype)
    compare(F.pixel_shuffle(xc, 2), F.pixel_shuffle(xg, 2), dtype)
    compare(F.pixel_unshuffle(F.pixel_shuffle(xc, 2), 2), F.pixel_unshuffle(F.pixel_shuffle(xg, 2), 2), dtype)
    w = RNG.standard_normal(8)
    compare(F.prelu(xc, ember.tensor(w, dtype=dtype)), F.prelu(xg, ember.tensor(w, dtype=dtype, device="cuda")),
            dtype)
    compare(F.huber_loss(xc, xc * 0.3, delta=0.5), F.huber_loss(xg, xg * 0.3, delta=0.5), dtype)
