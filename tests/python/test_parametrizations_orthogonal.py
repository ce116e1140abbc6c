"""ember.nn.utils.parametrizations.orthogonal: every map (matrix_exp, cayley,
householder) on square, tall, wide and batched weights keeps the weight
orthogonal, starts at the Q of the weight's QR decomposition (numpy), stays
orthogonal through an optimizer step, accepts assignments; against torch
where importable."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.utils import parametrizations
from ember.nn.utils._orthogonal import householder_product
from harness import torch

CASES = []


def qr_q(w):
    """Q of w's QR with R's diagonal positive; for a wide w, that of w^T, transposed."""
    wide = w.shape[-2] < w.shape[-1]
    m = np.swapaxes(w, -1, -2) if wide else w
    q, r = np.linalg.qr(m)
    q = q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    return np.swapaxes(q, -1, -2) if wide else q


def assert_orthogonal(w, atol=1e-5):
    n, k = w.shape[-2], w.shape[-1]
    g = np.swapaxes(w, -1, -2) @ w if n >= k else w @ np.swapaxes(w, -1, -2)
    np.testing.assert_allclose(g, np.broadcast_to(np.eye(min(n, k)), g.shape), atol=atol)


MAPS = [("matrix_exp", True), ("cayley", True), ("householder", True), ("householder", False)]


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
@pytest.mark.parametrize("orthogonal_map,trivialization", MAPS)
def test_orthogonal_maps(shape, orthogonal_map, trivialization):
    ember.manual_seed(0)
    m = nn.Linear(shape[-1], shape[-2], bias=False)
    if len(shape) == 3:
        m.weight = nn.Parameter(ember.randn(*shape))
    w0 = m.weight.detach().numpy().astype(np.float64)
    parametrizations.orthogonal(m, "weight", orthogonal_map=orthogonal_map, use_trivialization=trivialization)
    w = m.weight.detach().numpy()
    assert_orthogonal(w)
    np.testing.assert_allclose(w, qr_q(w0), atol=1e-5)
    # a training step on the unconstrained original keeps the weight orthogonal, and changes it
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    x = ember.randn(shape[-1], 4)
    (ember.matmul(m.weight, x) ** 3).sum().backward()
    opt.step()
    w1 = m.weight.detach().numpy()
    assert_orthogonal(w1)
    assert np.abs(w1 - w).max() > 1e-4
    # assigning an orthogonal matrix sets the weight to it
    q = qr_q(np.random.default_rng(1).standard_normal(shape))
    m.weight = ember.tensor(q.astype(np.float32))
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-5)


def test_default_map_and_errors():
    m = parametrizations.orthogonal(nn.Linear(3, 3))
    assert m.parametrizations.weight[0].orthogonal_map == "matrix_exp"
    m = parametrizations.orthogonal(nn.Linear(3, 5))
    assert m.parametrizations.weight[0].orthogonal_map == "householder"
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        parametrizations.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    m = parametrizations.orthogonal(nn.Linear(3, 3))
    with pytest.raises(ValueError, match="shape"):
        m.weight = ember.eye(2)


def test_householder_product_matches_explicit_reflections():
    rng = np.random.default_rng(2)
    v = rng.standard_normal((5, 3))
    tau = rng.uniform(0.5, 1.5, 3)
    want = np.eye(5)
    for i in range(3):
        vec = np.concatenate([np.zeros(i), [1.0], v[i + 1:, i]])
        want = want @ (np.eye(5) - tau[i] * np.outer(vec, vec))
    got = householder_product(ember.tensor(v), ember.tensor(tau))
    np.testing.assert_allclose(got.numpy(), want[:, :3], rtol=1e-12)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("orthogonal_map,trivialization", MAPS)
def test_against_torch(orthogonal_map, trivialization):
    for shape in ((4, 4), (5, 3), (3, 5)):
        ember.manual_seed(0)
        m = nn.Linear(shape[1], shape[0])
        tm = torch.nn.Linear(shape[1], shape[0])
        with torch.no_grad():
            tm.weight.copy_(torch.tensor(m.weight.detach().numpy()))
        parametrizations.orthogonal(m, orthogonal_map=orthogonal_map, use_trivialization=trivialization)
        torch.nn.utils.parametrizations.orthogonal(tm, orthogonal_map=orthogonal_map,
                                                   use_trivialization=trivialization)
        np.testing.assert_allclose(m.weight.detach().numpy(), tm.weight.detach().numpy(), atol=1e-5)
        if not trivialization:
            np.testing.assert_allclose(m.parametrizations.weight.original.detach().numpy(),
                                       tm.parametrizations.weight.original.detach().numpy(), atol=1e-5)
