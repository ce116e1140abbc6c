"""F.affine_grid and F.grid_sample (4-D; bilinear / nearest; zeros / border / reflection padding;
align_corners): against a per-point numpy reference (always), torch (when importable), gradcheck with
respect to input and grid, and bad input."""
import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import OpCase, table_tests, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
_F = (np.float32, np.float64)


def npy(t):
    return t.detach().cpu().numpy()


def np_reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = abs(c - low)
    extra, flips = math.fmod(c, span), math.floor(c / span)
    return extra + low if flips % 2 == 0 else span - extra + low


def np_source(c, size, padding, align):
    c = (c + 1) / 2 * (size - 1) if align else ((c + 1) * size - 1) / 2
    if padding == "border":
        c = min(max(c, 0), size - 1)
    elif padding == "reflection":
        c = np_reflect(c, 0, 2 * (size - 1)) if align else np_reflect(c, -1, 2 * size - 1)
        c = min(max(c, 0), size - 1)
    return c


def np_grid_sample(a, g, mode, padding, align):
    n, c, h, w = a.shape
    _, ho, wo, _ = g.shape
    out = np.zeros((n, c, ho, wo))

    def at(b, ix, iy):
        return a[b, :, iy, ix] if 0 <= ix < w and 0 <= iy < h else np.zeros(c)

    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                x = np_source(float(g[b, i, j, 0]), w, padding, align)
                y = np_source(float(g[b, i, j, 1]), h, padding, align)
                if mode == "nearest":
                    out[b, :, i, j] = at(b, int(np.rint(x)), int(np.rint(y)))
                    continue
                x0, y0 = math.floor(x), math.floor(y)
                fx, fy = x - x0, y - y0
                out[b, :, i, j] = ((1 - fx) * (1 - fy) * at(b, x0, y0) + fx * (1 - fy) * at(b, x0 + 1, y0)
                                   + (1 - fx) * fy * at(b, x0, y0 + 1) + fx * fy * at(b, x0 + 1, y0 + 1))
    return out.astype(a.dtype)


def np_affine_grid(theta, size, align):
    n, _, h, w = size

    def base(k):
        v = np.linspace(-1, 1, k)
        return v if align else v * (k - 1) / k

    xs, ys = np.meshgrid(base(w), base(h))
    pts = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(-1, 3)
    return np.einsum("pk,njk->npj", pts, theta).reshape(n, h, w, 2).astype(theta.dtype)


def _row(mode, padding, align):
    return OpCase(f"grid_sample_{mode}_{padding}{'_align' if align else ''}",
                  lambda x, g: F.grid_sample(x, g * 0.7, mode, padding, align),
                  lambda a, g: np_grid_sample(a, g * np.asarray(0.7, g.dtype), mode, padding, align),
                  [[(2, 2, 4, 5), (2, 3, 4, 2)]], dtypes=_F, rtol=1e-4, atol=1e-5, grad=mode == "bilinear")


CASES = [_row(m, p, a) for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
         for a in (False, True)] + [
    OpCase("affine_grid", lambda t: F.affine_grid(t, (2, 1, 3, 4)), lambda t: np_affine_grid(t, (2, 1, 3, 4), False),
           [[(2, 2, 3)]], dtypes=_F),
    OpCase("affine_grid_align", lambda t: F.affine_grid(t, (1, 3, 2, 5), align_corners=True),
           lambda t: np_affine_grid(t, (1, 3, 2, 5), True), [[(1, 2, 3)]], dtypes=_F),
]
test_table_forward, test_table_gradcheck = table_tests(CASES)


def test_identity_transform_reproduces_the_image():
    x = ember.tensor(np.random.default_rng(0).standard_normal((2, 3, 5, 4)))
    theta = ember.tensor(np.tile(np.array([[1.0, 0, 0], [0, 1, 0]]), (2, 1, 1)))
    for align in (False, True):
        grid = F.affine_grid(theta, (2, 3, 5, 4), align_corners=align)
        np.testing.assert_allclose(npy(F.grid_sample(x, grid, align_corners=align)), npy(x), atol=1e-12)
    # A horizontal flip (x -> -x) reverses the columns.
    flip = ember.tensor(np.tile(np.array([[-1.0, 0, 0], [0, 1, 0]]), (2, 1, 1)))
    out = F.grid_sample(x, F.affine_grid(flip, (2, 3, 5, 4)), mode="nearest")
    np.testing.assert_allclose(npy(out), npy(x)[..., ::-1])


def test_errors():
    x = ember.ones(1, 1, 3, 3)
    g = ember.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError, match="mode"):
        F.grid_sample(x, g, mode="linear")
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(x, g, padding_mode="wrap")
    with pytest.raises(RuntimeError, match="grid"):
        F.grid_sample(x, ember.zeros(1, 2, 2, 3))
    with pytest.raises(ValueError, match="Nx2x3"):
        F.affine_grid(ember.zeros(1, 3, 3), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="floating point"):
        F.affine_grid(ember.zeros(1, 2, 3, dtype=ember.int64), (1, 1, 2, 2))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_nan_coordinates(mode, padding):
    # A NaN coordinate samples nothing with zeros padding (NaN through the weights for the
    # interpolating modes, 0 for nearest); border and reflection clip it to pixel 0, as torch.
    x = ember.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    nan = float("nan")
    y = 0.2
    got = npy(F.grid_sample(x, ember.tensor([[[[nan, y]]]]), mode, padding, False)).item()
    at_pixel_0 = npy(F.grid_sample(x, ember.tensor([[[[1 / 4 - 1, y]]]]), mode, padding, False)).item()
    if mode == "bicubic" or padding == "zeros":
        assert (got == 0.0) if mode == "nearest" else np.isnan(got)
    else:
        assert got == at_pixel_0


@needs_torch
@pytest.mark.parametrize("align", [False, True])
def test_torch_parity(align):
    import torch.nn.functional as TF
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5, 6))
    g = rng.uniform(-1.4, 1.4, (2, 4, 3, 2))
    theta = rng.standard_normal((2, 2, 3))
    np.testing.assert_allclose(npy(F.affine_grid(ember.tensor(theta), (2, 3, 4, 5), align_corners=align)),
                               TF.affine_grid(torch.tensor(theta), (2, 3, 4, 5), align_corners=align).numpy(),
                               rtol=1e-12, atol=1e-14)
    for mode in ("bilinear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            ex, eg = ember.tensor(x, requires_grad=True), ember.tensor(g, requires_grad=True)
            tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
            got = F.grid_sample(ex, eg, mode, padding, align)
            ref = TF.grid_sample(tx, tg, mode, padding, align)
            np.testing.assert_allclose(npy(got), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
            got.square().sum().backward()
            ref.square().sum().backward()
            np.testing.assert_allclose(npy(ex.grad), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
            if mode == "bilinear":
                np.testing.assert_allclose(npy(eg.grad), tg.grad.numpy(), rtol=1e-9, atol=1e-10)
