"""API gaps that sequence / NLP / probabilistic PyTorch scripts hit (tests/compat_scripts/seq), each
fixed in ember: torch.backends.cuda.sdp_kernel, Embedding(max_norm=...) and (sparse=True) with
SparseAdam, Normal.icdf, distributions keeping the caller's parameter tensors and validating log_prob
values, torch.save of an argparse.Namespace, and torch.version.
Compared with numpy always and with torch when importable."""
import argparse
import io
import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.distributions import Normal
from harness import torch

CASES = []  # no OpCase rows: behaviour of modules and helpers, not ops


# ---- torch.backends.cuda.sdp_kernel (deprecated, still in older GPT scripts) --------------------

def test_sdp_kernel_switches_paths_and_restores():
    cuda = ember.backends.cuda
    before = (cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(), cuda.mem_efficient_sdp_enabled())
    q = ember.randn(1, 2, 3, 4)
    with pytest.warns(FutureWarning, match="sdp_kernel"):
        ctx = cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False)
    with ctx:
        assert (cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(), cuda.mem_efficient_sdp_enabled()) == (
            False, True, False)
        out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert out.shape == (1, 2, 3, 4)
    assert (cuda.flash_sdp_enabled(), cuda.math_sdp_enabled(), cuda.mem_efficient_sdp_enabled()) == before


def test_sdp_kernel_restores_after_an_exception():
    cuda = ember.backends.cuda
    before = cuda.math_sdp_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ValueError):
            with cuda.sdp_kernel(enable_math=not before):
                raise ValueError
    assert cuda.math_sdp_enabled() == before


# ---- Embedding(max_norm=...) --------------------------------------------------------------------

def _renormed(w, rows, max_norm, p):
    w = w.copy()
    for r in set(rows):
        n = np.linalg.norm(w[r], ord=p)
        if n > max_norm:
            w[r] *= max_norm / (n + 1e-7)
    return w


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_renormalizes_looked_up_rows(norm_type):
    w = (np.arange(15, dtype=np.float32).reshape(5, 3) / 4)
    idx = np.array([[1, 3], [3, 0]])
    emb = nn.Embedding.from_pretrained(ember.tensor(w), freeze=False, max_norm=1.0, norm_type=norm_type)
    out = emb(ember.tensor(idx))
    out.sum().backward()
    expect_w = _renormed(w, idx.ravel().tolist(), 1.0, norm_type)
    np.testing.assert_allclose(emb.weight.detach().numpy(), expect_w, rtol=1e-6)
    np.testing.assert_allclose(out.detach().numpy(), expect_w[idx], rtol=1e-6)
    assert emb.weight.detach().numpy()[[2, 4]].tolist() == w[[2, 4]].tolist()  # rows not looked up stay
    counts = np.bincount(idx.ravel(), minlength=5)[:, None] * np.ones(3)
    np.testing.assert_allclose(emb.weight.grad.numpy(), counts)
    if torch is not None:
        temb = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, max_norm=1.0, norm_type=norm_type)
        tout = temb(torch.tensor(idx))
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(emb.weight.detach().numpy(), temb.weight.detach().numpy(), rtol=1e-6)


def test_functional_embedding_max_norm_and_padding_idx():
    w = ember.full((4, 2), 3.0)
    out = F.embedding(ember.tensor([0, 2]), w, padding_idx=0, max_norm=2.0)
    np.testing.assert_allclose(np.linalg.norm(out.numpy(), axis=1), [2.0, 2.0], rtol=1e-5)
    assert w[1].tolist() == [3.0, 3.0]


# ---- Normal.icdf, and a distribution keeps the caller's tensors ---------------------------------

def test_normal_icdf_matches_quantiles_and_inverts_cdf():
    loc = ember.tensor([0.0, 1.0], requires_grad=True)
    d = Normal(loc, ember.tensor([1.0, 2.0]))
    p = ember.tensor([[0.025, 0.5], [0.9, 0.1]])
    q = d.icdf(p)
    expect = np.array([[-1.959964, 1.0], [1.281552, 1.0 - 2 * 1.281552]])
    np.testing.assert_allclose(q.detach().numpy(), expect, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d.cdf(q).detach().numpy(), p.numpy(), rtol=1e-5)
    q.sum().backward()
    assert loc.grad.tolist() == [2.0, 2.0]
    assert math.isclose(Normal(0.0, 1.0).icdf(ember.tensor(0.975)).item(), 1.959964, rel_tol=1e-5)


def test_distribution_keeps_full_shape_parameters_as_given():
    loc, scale = ember.zeros(3, requires_grad=True), ember.ones(3)
    d = Normal(loc, scale)
    assert d.loc is loc and d.scale is scale
    wide = Normal(loc, ember.ones(2, 1))
    assert wide.loc.shape == (2, 3) and wide.loc is not loc


# ---- torch.save(model) and checkpoints holding Python objects ----------------------------------

class _TinyRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(3, 4)
        self.dec = nn.Linear(4, 2)


def test_save_whole_module_and_namespace_round_trip():
    model = _TinyRNN()
    buf = io.BytesIO()
    ember.save({"model": model, "args": argparse.Namespace(lr=0.1, bptt=35), "epoch": 3}, buf)
    buf.seek(0)
    back = ember.load(buf, weights_only=False)
    assert type(back["model"]) is _TinyRNN and back["args"].bptt == 35 and back["epoch"] == 3
    for (n1, p1), (n2, p2) in zip(model.named_parameters(), back["model"].named_parameters()):
        assert n1 == n2 and ember.equal(p1, p2) and isinstance(p2, nn.Parameter)
    x = ember.randn(5, 1, 3)
    assert ember.equal(back["model"].dec(back["model"].rnn(x)[0]), model.dec(model.rnn(x)[0]))


# ---- Embedding(sparse=True) + SparseAdam (word2vec) ------------------------------------------------

def _lazy_adam_reference(w, grads, lr=0.01, betas=(0.9, 0.999), eps=1e-8):
    w, m, v = w.astype(np.float64), np.zeros_like(w, np.float64), np.zeros_like(w, np.float64)
    for step, g in enumerate(grads, 1):
        rows = np.flatnonzero(np.abs(g).sum(1))
        m[rows] = betas[0] * m[rows] + (1 - betas[0]) * g[rows]
        v[rows] = betas[1] * v[rows] + (1 - betas[1]) * g[rows] ** 2
        size = lr * math.sqrt(1 - betas[1] ** step) / (1 - betas[0] ** step)
        w[rows] -= size * m[rows] / (np.sqrt(v[rows]) + eps)
    return w


def test_sparse_embedding_with_sparse_adam_updates_only_looked_up_rows():
    w0 = np.sin(np.arange(24, dtype=np.float32)).reshape(6, 4)
    batches = [np.array([0, 2, 2]), np.array([1, 2]), np.array([5])]
    emb = nn.Embedding.from_pretrained(ember.tensor(w0), freeze=False, sparse=True)
    opt = ember.optim.SparseAdam(emb.parameters(), lr=0.01)
    grads = []
    for idx in batches:
        opt.zero_grad()
        (emb(ember.tensor(idx)) ** 2).sum().backward()
        grads.append(emb.weight.grad.numpy().copy())
        opt.step()
    w = emb.weight.detach().numpy()
    np.testing.assert_allclose(w, _lazy_adam_reference(w0, grads), rtol=1e-5, atol=1e-6)
    assert w[3].tolist() == w0[3].tolist() and w[4].tolist() == w0[4].tolist()  # never looked up
    assert opt.state[emb.weight]["step"].item() == 3
    if torch is not None:
        temb = torch.nn.Embedding.from_pretrained(torch.tensor(w0), freeze=False, sparse=True)
        topt = torch.optim.SparseAdam(temb.parameters(), lr=0.01)
        for idx in batches:
            topt.zero_grad()
            (temb(torch.tensor(idx)) ** 2).sum().backward()
            topt.step()
        np.testing.assert_allclose(w, temb.weight.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_sparse_adam_maximize_and_checks():
    p = nn.Parameter(ember.zeros(3, 2))
    opt = ember.optim.SparseAdam([p], lr=0.1, maximize=True)
    p.grad = ember.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, -2.0]])
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [[0.1, 0.0], [0.0, 0.0], [0.0, -0.1]], atol=1e-6)
    with pytest.raises(ValueError):
        ember.optim.SparseAdam([p], lr=-1.0)


# ---- log_prob validates its value as torch does (ValueError, not gather's RuntimeError) ------------

@pytest.mark.parametrize("make, bad", [
    (lambda: ember.distributions.Categorical(probs=ember.tensor([0.5, 0.5])), ember.tensor(3)),
    (lambda: ember.distributions.OneHotCategorical(probs=ember.tensor([0.5, 0.5])), ember.tensor([0.5, 0.5])),
    (lambda: ember.distributions.Bernoulli(probs=ember.tensor([0.3])), ember.tensor([0.5])),
    (lambda: ember.distributions.Exponential(ember.tensor([1.0])), ember.tensor([-1.0])),
    (lambda: Normal(ember.zeros(2), 1.0), ember.zeros(3)),  # not broadcastable with batch_shape
])
def test_log_prob_rejects_values_outside_the_support(make, bad):
    with pytest.raises(ValueError):
        make().log_prob(bad)


def test_log_prob_accepts_valid_values():
    c = ember.distributions.Categorical(logits=ember.zeros(4, 3))
    assert c.log_prob(ember.tensor([0, 1, 2, 0])).shape == (4,)
    b = ember.distributions.Bernoulli(logits=ember.zeros(3))
    np.testing.assert_allclose(b.log_prob(ember.tensor([0.0, 1.0, 1.0])).numpy(), [math.log(0.5)] * 3, rtol=1e-6)
    assert Normal(0.0, 1.0).log_prob(ember.tensor(0.0)).item() == pytest.approx(-0.5 * math.log(2 * math.pi))
    with pytest.raises(ValueError):
        Normal(0.0, 1.0).log_prob(0.0)  # torch: the value must be a Tensor


# ---- torch.version -----------------------------------------------------------------------------

def test_version_module():
    info = ember._C._build_info()
    assert ember.version.__version__ == ember.__version__
    if info["cuda"] == "ON":
        assert ember.version.cuda == ".".join(info["cuda_toolkit"].split(".")[:2])
    else:
        assert ember.version.cuda is None
    assert ember.version.hip is None and isinstance(ember.version.debug, bool)
    if torch is not None:
        assert {"cuda", "hip", "debug", "git_version", "__version__"} <= set(dir(torch.version))
