"""The source taps and weights of interpolate's bicubic mode and of its antialiased bilinear / bicubic
modes, one dimension at a time: index [n_out, K] and weight [n_out, K] arrays (numpy, host), which
interpolate turns into K index_selects and a weighted sum on the input's device.

Bicubic follows torch's cubic convolution (A = -0.75, taps clamped at the border). With antialias the
filter is stretched by the downscaling factor so every input pixel under it contributes (torch's and
PIL's scheme: a triangle for bilinear, the A = -0.5 cubic for bicubic, weights normalised per output)."""
import numpy as np

__all__ = ["cubic_taps", "antialias_taps"]

_A_UPSAMPLE = -0.75  # torch's bicubic
_A_ANTIALIAS = -0.5  # torch's (and PIL's) antialiased bicubic


def _source_scale(n_in, n_out, scale, align_corners):
    """Input pixels per output pixel, as torch's area_pixel_compute_scale."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _cubic(x, a):
    """The cubic convolution kernel at distance |x|."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x <= 1, near, np.where(x < 2, far, 0.0))


def cubic_taps(n_in, n_out, scale, align_corners):
    """Four taps around each output's source position, their indices clamped to the input."""
    s = _source_scale(n_in, n_out, scale, align_corners)
    dst = np.arange(n_out, dtype=np.float64)
    src = dst * s if align_corners else s * (dst + 0.5) - 0.5  # no clamp at 0 for cubic, as torch
    base = np.floor(src)
    t = (src - base)[:, None]
    offsets = np.arange(-1, 3)[None, :]
    weights = _cubic(t - offsets, _A_UPSAMPLE)
    index = np.clip(base.astype(np.int64)[:, None] + offsets, 0, n_in - 1)
    return index, weights


def antialias_taps(n_in, n_out, scale, align_corners, cubic):
    """Every input position under the (stretched) filter, weights normalised to sum to 1; positions past
    a row's support get index 0 and weight 0 so all rows have the same number of taps."""
    s = _source_scale(n_in, n_out, scale, align_corners)
    half_width = 2.0 if cubic else 1.0
    support = half_width * s if s >= 1.0 else half_width
    stretch = 1.0 / s if s >= 1.0 else 1.0
    rows = []
    for i in range(n_out):
        center = s * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        x = (np.arange(lo, hi) - center + 0.5) * stretch
        w = _cubic(x, _A_ANTIALIAS) if cubic else np.maximum(0.0, 1.0 - np.abs(x))
        total = w.sum()
        rows.append((np.arange(lo, hi), w / total if total != 0 else w))
    k = max(len(idx) for idx, _ in rows)
    index = np.zeros((n_out, k), dtype=np.int64)
    weights = np.zeros((n_out, k))
    for i, (idx, w) in enumerate(rows):
        index[i, :len(idx)] = idx
        weights[i, :len(w)] = w
    return index, weights
