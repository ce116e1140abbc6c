"""lp_pool1d/2d + LPPool1d/2d, max_unpool1d/2d + MaxUnpool1d/2d, pdist, the *_with_indices spellings and
elu_ / hardtanh_ / leaky_relu_: against numpy (always), torch (when importable), gradcheck, bad input."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from harness import OpCase, table_tests, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
_F = (np.float32, np.float64)


def npy(t):
    return t.detach().cpu().numpy()


def np_lp_pool2d(a, p, k, s):
    n, c, h, w = a.shape
    oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
    out = np.zeros((n, c, oh, ow))
    for y in range(oh):
        for x in range(ow):
            win = a[:, :, y * s[0]:y * s[0] + k[0], x * s[1]:x * s[1] + k[1]].astype(np.float64)
            out[:, :, y, x] = (win ** p).sum((2, 3)) ** (1 / p)
    return out.astype(a.dtype)


def np_pdist(a, p):
    n = a.shape[0]
    return np.array([(np.abs(a[i] - a[j]) ** p).sum() ** (1 / p) for i in range(n) for j in range(i + 1, n)],
                    dtype=a.dtype).reshape(-1)


def np_unpool2d_of_maxpool(a, k):
    """max_pool2d (k x k, stride k) then max_unpool2d: each window's maximum kept in place, zeros elsewhere."""
    out = np.zeros_like(a)
    n, c, h, w = a.shape
    for y in range(0, h - k + 1, k):
        for x in range(0, w - k + 1, k):
            win = a[:, :, y:y + k, x:x + k].reshape(n, c, -1)
            arg = win.argmax(-1)
            for i in range(n):
                for j in range(c):
                    out[i, j, y + arg[i, j] // k, x + arg[i, j] % k] = win[i, j, arg[i, j]]
    return out


def _pool_unpool(x):
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    return F.max_unpool2d(values, indices, 2, output_size=x.shape[-2:])


CASES = [
    OpCase("lp_pool2d", lambda x: F.lp_pool2d(x, 2, 2), lambda a: np_lp_pool2d(a, 2, (2, 2), (2, 2)),
           [[(2, 3, 4, 6)]], dtypes=_F, domain=(0.2, 2.0), rtol=1e-4),
    OpCase("lp_pool2d_p3_stride", lambda x: F.lp_pool2d(x, 3, (2, 3), stride=1),
           lambda a: np_lp_pool2d(a, 3, (2, 3), (1, 1)), [[(1, 2, 4, 5)]], dtypes=_F, domain=(0.2, 2.0), rtol=1e-4),
    OpCase("lp_pool1d", lambda x: F.lp_pool1d(x, 2, 3),
           lambda a: np_lp_pool2d(a[:, :, None], 2, (1, 3), (1, 3))[:, :, 0], [[(2, 3, 6)]], dtypes=_F,
           domain=(0.2, 2.0), rtol=1e-4),
    OpCase("pdist", lambda x: F.pdist(x), lambda a: np_pdist(a, 2), [[(5, 3)]], dtypes=_F, rtol=1e-4),
    OpCase("pdist_p1", lambda x: F.pdist(x, 1.0), lambda a: np_pdist(a, 1), [[(4, 2)]], dtypes=_F, rtol=1e-4),
    OpCase("max_unpool2d", _pool_unpool, lambda a: np_unpool2d_of_maxpool(a, 2), [[(2, 2, 4, 6)], [(1, 3, 5, 4)]],
           dtypes=_F),
]
test_table_forward, test_table_gradcheck = table_tests(CASES)


def test_modules_and_unpool_1d():
    rng = np.random.default_rng(1)
    a = np.abs(rng.standard_normal((2, 3, 4, 6))) + 0.1
    x = ember.tensor(a)
    np.testing.assert_allclose(npy(nn.LPPool2d(2, 2)(x)), np_lp_pool2d(a, 2, (2, 2), (2, 2)), rtol=1e-10)
    np.testing.assert_allclose(npy(nn.LPPool1d(1, 2)(x[0])), a[0].reshape(3, 4, 3, 2).sum(-1), rtol=1e-10)
    b = rng.standard_normal((2, 3, 8))
    values, indices = nn.MaxPool1d(2, return_indices=True)(ember.tensor(b))
    out = npy(nn.MaxUnpool1d(2)(values, indices))
    kept = b.reshape(2, 3, 4, 2).max(-1)
    assert out.shape == (2, 3, 8) and np.allclose(out.reshape(2, 3, 4, 2).sum(-1), kept)  # one kept per window
    assert np.count_nonzero(out) == kept.size
    v2, i2 = F.max_pool2d(x, 2, return_indices=True)
    assert nn.MaxUnpool2d(2)(v2, i2).shape == (2, 3, 4, 6)
    v, i = F.max_pool1d_with_indices(ember.tensor(b), 2)
    assert i.dtype == ember.int64 and v.shape == (2, 3, 4)
    assert F.adaptive_max_pool2d_with_indices(x, 2)[1].shape == (2, 3, 2, 2)
    assert F.adaptive_max_pool1d_with_indices(ember.tensor(b), 3)[1].shape == (2, 3, 3)
    assert F.pdist(ember.ones(1, 3)).shape == (0,)


def test_inplace_spellings():
    x = ember.tensor([-2.0, -0.5, 0.5, 2.0])
    assert F.hardtanh_(x) is x and npy(x).tolist() == [-1.0, -0.5, 0.5, 1.0]
    y = ember.tensor([-2.0, 1.0])
    F.leaky_relu_(y, 0.5)
    assert npy(y).tolist() == [-1.0, 1.0]
    z = ember.tensor([0.0, -1.0], dtype=ember.float64)
    F.elu_(z)
    np.testing.assert_allclose(npy(z), [0.0, np.expm1(-1.0)])


def test_errors():
    # Increasing values: each window's max is its bottom-right element, so row 5 holds indices 26 and 28.
    v, i = F.max_pool2d(ember.arange(30.0).reshape(1, 1, 6, 5), 2, return_indices=True)
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(v, i, 2)  # the default output size (6, 4) cannot hold an index from a 5-wide input
    with pytest.raises(RuntimeError, match="indices"):
        F.max_unpool2d(v, i[..., :1], 2)
    with pytest.raises(RuntimeError, match="pdist only supports 2D"):
        F.pdist(ember.ones(3))


@needs_torch
def test_torch_parity():
    import torch.nn.functional as TF
    rng = np.random.default_rng(2)
    a = np.abs(rng.standard_normal((2, 3, 6, 4))) + 0.1
    calls = [
        lambda f, x: f.lp_pool2d(x, 2.0, 2),
        lambda f, x: f.lp_pool2d(x, 1.5, (3, 2), stride=1, ceil_mode=True),
        lambda f, x: f.lp_pool1d(x[0], 3.0, 2),
        lambda f, x: f.pdist(x[0, 0], 1.5),
        lambda f, x: f.max_unpool2d(*f.max_pool2d(x, 2, return_indices=True), 2),
        lambda f, x: f.max_unpool1d(*f.max_pool1d(x[0], 2, stride=1, return_indices=True), 2, stride=1),
    ]
    for k, call in enumerate(calls):
        ex, tx = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        got, ref = call(F, ex), call(TF, tx)
        np.testing.assert_allclose(npy(got), ref.detach().numpy(), rtol=1e-10, err_msg=str(k))
        got.square().sum().backward()
        ref.square().sum().backward()
        np.testing.assert_allclose(npy(ex.grad), tx.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=str(k))
