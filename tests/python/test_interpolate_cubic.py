"""interpolate's bicubic mode and its antialiased bilinear / bicubic modes: against a direct 2-D numpy
evaluation of the cubic convolution (always), torch (when importable), known values, gradcheck in
float64, integer inputs and bad arguments."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from harness import OpCase, table_tests, torch

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not importable")
RNG = np.random.default_rng(17)
_F = (np.float32, np.float64)


def np_cubic_kernel(x, a=-0.75):
    x = abs(x)
    if x <= 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    if x < 2:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return 0.0


def np_bicubic(a, size, align_corners=False):
    """Each output pixel as the 4x4 weighted sum around its source point, taps clamped to the border."""
    n, c, h, w = a.shape
    oh, ow = size
    out = np.zeros((n, c, oh, ow))

    def source(o, n_in, n_out):
        if align_corners:
            return o * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
        return (n_in / n_out) * (o + 0.5) - 0.5

    for y in range(oh):
        sy = source(y, h, oh)
        by = int(np.floor(sy))
        for x in range(ow):
            sx = source(x, w, ow)
            bx = int(np.floor(sx))
            for i in range(-1, 3):
                for j in range(-1, 3):
                    weight = np_cubic_kernel(sy - (by + i)) * np_cubic_kernel(sx - (bx + j))
                    out[:, :, y, x] += weight * a[:, :, min(max(by + i, 0), h - 1), min(max(bx + j, 0), w - 1)]
    return out.astype(a.dtype)


CASES = [
    OpCase("interpolate_bicubic_up", lambda x: F.interpolate(x, size=(7, 9), mode="bicubic"),
           lambda a: np_bicubic(a, (7, 9)), [[(2, 2, 4, 5)]], dtypes=_F, rtol=1e-5, atol=1e-5),
    OpCase("interpolate_bicubic_down_align", lambda x: F.interpolate(x, size=(3, 2), mode="bicubic",
                                                                     align_corners=True),
           lambda a: np_bicubic(a, (3, 2), True), [[(1, 3, 6, 5)]], dtypes=_F, rtol=1e-5, atol=1e-5),
]

test_forward, test_gradcheck = table_tests(CASES)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_gradcheck(mode):
    x = ember.tensor(RNG.standard_normal((1, 2, 7, 9)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: F.interpolate(t, size=(3, 4), mode=mode, antialias=True), [x])


def test_antialias_known_values():
    """Downscaling 4 -> 2 with the triangle filter stretched by 2: taps 0, 1, 2 weighted 3/7, 3/7, 1/7."""
    x = ember.arange(16.0).reshape(1, 1, 4, 4)
    out = F.interpolate(x, size=(2, 2), mode="bilinear", antialias=True)
    row = np.array([3, 3, 1]) / 7
    first = row @ np.array([0.0, 1.0, 2.0])
    np.testing.assert_allclose(out.numpy()[0, 0, 0, 0], first * 5, rtol=1e-6)  # rows weighted alike: 4*first + first
    np.testing.assert_allclose(out.numpy(), [[[[25 / 7, 36 / 7], [69 / 7, 80 / 7]]]], rtol=1e-6)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_keeps_constants_and_upscaling_equals_plain_mode_for_bilinear(mode):
    x = ember.full((1, 2, 9, 11), 3.25, dtype=ember.float64)
    np.testing.assert_allclose(F.interpolate(x, size=(4, 5), mode=mode, antialias=True).numpy(), 3.25, rtol=1e-12)
    y = ember.tensor(RNG.standard_normal((1, 2, 4, 5)))
    if mode == "bilinear":  # no stretching when enlarging: the triangle filter is bilinear interpolation
        np.testing.assert_allclose(F.interpolate(y, size=(7, 9), mode=mode, antialias=True).numpy(),
                                   F.interpolate(y, size=(7, 9), mode=mode).numpy(), rtol=1e-12, atol=1e-12)


def test_uint8_rounds_once_and_saturates():
    a = RNG.integers(0, 256, (1, 3, 9, 8)).astype(np.uint8)
    a[0, 0, 4, 4], a[0, 0, 4, 5] = 255, 0  # a sharp edge: the cubic overshoots past 255 and below 0
    got = F.interpolate(ember.tensor(a), size=(17, 15), mode="bicubic").numpy()
    want = np.clip(np.floor(np_bicubic(a.astype(np.float64), (17, 15)) + 0.5), 0, 255)
    assert got.dtype == np.uint8
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1  # float32 arithmetic vs float64 at .5 ties


def test_scale_factor_and_recompute():
    x = ember.tensor(RNG.standard_normal((1, 1, 5, 6)))
    out = F.interpolate(x, scale_factor=1.5, mode="bicubic")
    assert out.shape == (1, 1, 7, 9)
    recomputed = F.interpolate(x, scale_factor=1.5, mode="bicubic", recompute_scale_factor=True)
    np.testing.assert_allclose(recomputed.numpy(), np_bicubic(x.numpy(), (7, 9)), rtol=1e-10, atol=1e-12)


def test_bad_arguments():
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear and bicubic"):
        F.interpolate(ember.zeros(1, 1, 4, 4), size=2, mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="requires a 4-D tensor"):
        F.interpolate(ember.zeros(1, 1, 4), size=2, mode="linear", antialias=True)
    with pytest.raises(NotImplementedError, match="bicubic mode needs 4D"):
        F.interpolate(ember.zeros(1, 1, 4, 4, 4), size=2, mode="bicubic")


@needs_torch
@pytest.mark.parametrize("kwargs", [
    dict(size=(20, 31), mode="bicubic"), dict(size=(20, 31), mode="bicubic", align_corners=True),
    dict(scale_factor=2.5, mode="bicubic"), dict(size=(5, 7), mode="bicubic"),
    dict(size=(5, 7), mode="bilinear", antialias=True), dict(size=(5, 7), mode="bicubic", antialias=True),
    dict(size=(6, 9), mode="bilinear", antialias=True, align_corners=True),
    dict(scale_factor=0.3, mode="bicubic", antialias=True), dict(size=(26, 40), mode="bicubic", antialias=True),
])
def test_matches_torch_values_and_gradients(kwargs):
    a = RNG.standard_normal((2, 3, 13, 17))
    xt = torch.tensor(a, requires_grad=True)
    yt = torch.nn.functional.interpolate(xt, **kwargs)
    g = RNG.standard_normal(tuple(yt.shape))
    yt.backward(torch.tensor(g))
    xe = ember.tensor(a, requires_grad=True)
    ye = F.interpolate(xe, **kwargs)
    ye.backward(ember.tensor(g))
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


@needs_torch
def test_uint8_antialias_within_one_of_torch():
    a = RNG.integers(0, 256, (1, 3, 40, 50)).astype(np.uint8)
    for mode in ("bilinear", "bicubic"):
        got = F.interpolate(ember.tensor(a), size=(17, 23), mode=mode, antialias=True).numpy().astype(int)
        want = torch.nn.functional.interpolate(torch.tensor(a), size=(17, 23), mode=mode,
                                               antialias=True).numpy().astype(int)
        assert np.abs(got - want).max() <= 1  # torch rounds fixed-point weights
