"""grid_sample(mode="bicubic") (it raised NotImplementedError): against a per-pixel numpy reference of
PyTorch's documented algorithm (cubic convolution with A = -0.75 over 4x4 taps, each tap moved by the
padding mode), against torch when importable, and gradcheck for input and grid."""
import importlib.util

import numpy as np
import pytest

import ember
import ember.nn.functional as F


def _unnormalize(c, size, align):
    return (c + 1) / 2 * (size - 1) if align else ((c + 1) * size - 1) / 2


def _reflect(c, lo2, hi2):
    if lo2 == hi2:
        return 0.0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    c = abs(c - lo)
    flips, extra = np.floor(c / span), np.fmod(c, span)
    return extra + lo if flips % 2 == 0 else span - extra + lo


def _tap(img, ix, iy, padding, align):
    h, w = img.shape
    if padding == "border":
        ix, iy = min(max(ix, 0), w - 1), min(max(iy, 0), h - 1)
    elif padding == "reflection":
        ix = _reflect(ix, 0, 2 * (w - 1)) if align else _reflect(ix, -1, 2 * w - 1)
        iy = _reflect(iy, 0, 2 * (h - 1)) if align else _reflect(iy, -1, 2 * h - 1)
        ix, iy = min(max(ix, 0), w - 1), min(max(iy, 0), h - 1)
    ix, iy = int(ix), int(iy)
    return img[iy, ix] if 0 <= ix < w and 0 <= iy < h else 0.0


def _kernel(d, a=-0.75):
    d = abs(d)
    if d <= 1:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    if d < 2:
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return 0.0


def np_grid_sample_bicubic(x, grid, padding, align):
    n, c, h, w = x.shape
    out = np.zeros((n, c, grid.shape[1], grid.shape[2]))
    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx, gy = _unnormalize(grid[b, i, j, 0], w, align), _unnormalize(grid[b, i, j, 1], h, align)
                x0, y0 = np.floor(gx), np.floor(gy)
                for k in range(c):
                    out[b, k, i, j] = sum(
                        _tap(x[b, k], x0 + dx, y0 + dy, padding, align) * _kernel(gx - (x0 + dx))
                        * _kernel(gy - (y0 + dy)) for dy in (-1, 0, 1, 2) for dx in (-1, 0, 1, 2))
    return out


def _inputs(dtype=np.float32):
    rs = np.random.RandomState(0)
    x = rs.randn(2, 2, 4, 5).astype(dtype)
    grid = (rs.rand(2, 3, 4, 2) * 2.6 - 1.3).astype(dtype)  # some samples outside [-1, 1]
    return x, grid


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_bicubic_forward_matches_reference(padding, align):
    x, grid = _inputs()
    out = F.grid_sample(ember.tensor(x), ember.tensor(grid), mode="bicubic", padding_mode=padding, align_corners=align)
    np.testing.assert_allclose(out.numpy(), np_grid_sample_bicubic(x, grid, padding, align), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("padding", ["zeros", "reflection"])
def test_bicubic_gradcheck(padding):
    x, grid = _inputs(np.float64)
    xe = ember.tensor(x[:1, :1, :3, :4], requires_grad=True)
    ge = ember.tensor(grid[:1, :2, :2] * 0.9 + 0.01, requires_grad=True)  # away from integer taps
    assert ember.autograd.gradcheck(
        lambda a, g: F.grid_sample(a, g, mode="bicubic", padding_mode=padding, align_corners=False), (xe, ge))


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not importable")
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_bicubic_matches_torch(padding):
    import torch
    x, grid = _inputs()
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(grid, requires_grad=True)
    ref = torch.nn.functional.grid_sample(xt, gt, mode="bicubic", padding_mode=padding, align_corners=False)
    ref.square().sum().backward()
    xe, ge = ember.tensor(x, requires_grad=True), ember.tensor(grid, requires_grad=True)
    out = F.grid_sample(xe, ge, mode="bicubic", padding_mode=padding, align_corners=False)
    out.square().sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ge.grad.numpy(), gt.grad.numpy(), rtol=1e-4, atol=1e-4)
