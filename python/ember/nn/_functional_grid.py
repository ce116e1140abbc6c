"""affine_grid and grid_sample (4-D, as torch.nn.functional), composed of ember ops so they run on every
device and differentiate with respect to both the input and the grid. Re-exported by ember.nn.functional."""
import ember

__all__ = ["affine_grid", "grid_sample"]


def _base_coords(n, align_corners, like):
    """The normalized pixel-centre coordinates of n pixels in [-1, 1] (corners when align_corners)."""
    coords = ember.linspace(-1.0, 1.0, n, dtype=like.dtype, device=like.device)
    if not align_corners and n > 0:
        coords = coords * ((n - 1) / n)
    return coords


def affine_grid(theta, size, align_corners=False):
    """The sampling grid [N, H, W, 2] (x, y) of the affine maps theta [N, 2, 3] over an output of
    size (N, C, H, W)."""
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D sizes (2-D affine transforms) in ember, got size "
                                  f"{list(size)}")
    n, _, h, w = (int(v) for v in size)
    if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {list(size)}. Got "
                         f"{list(theta.shape)}.")
    if theta.shape[0] != n:
        raise ValueError(f"affine_grid: theta has {theta.shape[0]} matrices for a batch of {n}")
    if min(h, w) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")
    xs = _base_coords(w, align_corners, theta).reshape(1, w, 1).expand(h, w, 1)
    ys = _base_coords(h, align_corners, theta).reshape(h, 1, 1).expand(h, w, 1)
    ones = ember.ones(h, w, 1, dtype=theta.dtype, device=theta.device)
    base = ember.cat([xs, ys, ones], 2).reshape(1, h * w, 3)
    return ember.matmul(base, theta.transpose(1, 2)).reshape(n, h, w, 2)


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """Reflects coordinates into [twice_low / 2, twice_high / 2] by mirroring at its ends."""
    if twice_low == twice_high:
        return ember.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    coord = (coord - low).abs()
    extra = ember.fmod(coord, span)
    flips = ember.floor(coord / span)
    even = ember.fmod(flips, 2.0) == 0
    return ember.where(even, extra + low, span - extra + low)


def _source_coords(coord, size, padding_mode, align_corners, unnormalized=False):
    if not unnormalized:
        coord = _unnormalize(coord, size, align_corners)
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
    if padding_mode in ("border", "reflection"):
        # A NaN coordinate (or an infinite one reflected) is clipped to 0, as torch's kernels do.
        coord = ember.clamp(ember.where(ember.isnan(coord), ember.zeros_like(coord), coord), 0, size - 1)
    return coord


def _tap_coords(coord, size, padding_mode, align_corners):
    """An integer bicubic tap moved inside the image by the padding mode (zeros: left outside)."""
    if padding_mode == "zeros":
        return coord
    return _source_coords(coord, size, padding_mode, align_corners, unnormalized=True)


def _cubic_weights(t, a=-0.75):
    """The four cubic-convolution weights (Keys, a = -0.75 as torch) of taps at -1, 0, 1, 2 from t in [0, 1)."""
    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Samples input [N, C, H, W] at grid [N, Ho, Wo, 2] ((x, y) in [-1, 1]) -> [N, C, Ho, Wo]. Modes
    bilinear, nearest and bicubic; padding zeros, border or reflection. Each neighbour (up to 16 for
    bicubic) is one gather over the flattened image."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if input.dim() != 4:
        raise NotImplementedError(f"grid_sample: ember supports 4-D input [N, C, H, W], got {input.dim()}-D")
    if grid.dim() != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid of shape [N, H, W, 2] with N = {input.shape[0]}, got "
                           f"{list(grid.shape)}")
    align_corners = bool(align_corners)
    n, c, h, w = input.shape
    ho, wo = grid.shape[1], grid.shape[2]
    flat = input.reshape(n, c, h * w)

    def corner(ix, iy):
        """The input at integer (ix, iy) (float tensors), zero where that is outside the image."""
        inside = (ix >= 0) & (ix <= w - 1) & (iy >= 0) & (iy <= h - 1)  # False for NaN coordinates too
        origin = ember.zeros_like(ix)  # read where the tap is outside, then replaced by 0
        index = (ember.where(inside, iy, origin) * w + ember.where(inside, ix, origin)).detach().to(ember.int64)
        values = flat.gather(2, index.expand(n, c, ho * wo))
        return ember.where(inside, values, ember.zeros_like(values))

    if mode == "bicubic":
        # As torch: the cubic runs over the unpadded coordinate; padding moves each of the 4x4 taps.
        x = _unnormalize(grid[..., 0], w, align_corners).reshape(n, 1, ho * wo)
        y = _unnormalize(grid[..., 1], h, align_corners).reshape(n, 1, ho * wo)
        x0, y0 = ember.floor(x).detach(), ember.floor(y).detach()
        wx, wy = _cubic_weights(x - x0), _cubic_weights(y - y0)
        out = 0
        for i in range(4):
            ty = _tap_coords(y0 + (i - 1), h, padding_mode, align_corners)
            for j in range(4):
                tx = _tap_coords(x0 + (j - 1), w, padding_mode, align_corners)
                out = out + corner(tx, ty) * (wx[j] * wy[i])
        return out.reshape(n, c, ho, wo)
    x = _source_coords(grid[..., 0], w, padding_mode, align_corners).reshape(n, 1, ho * wo)
    y = _source_coords(grid[..., 1], h, padding_mode, align_corners).reshape(n, 1, ho * wo)
    if mode == "nearest":
        out = corner(ember.round(x), ember.round(y))  # round half to even, as torch's nearbyint
    else:
        x0, y0 = ember.floor(x).detach(), ember.floor(y).detach()
        x1, y1 = x0 + 1, y0 + 1
        wx1, wy1 = x - x0, y - y0
        wx0, wy0 = 1 - wx1, 1 - wy1
        out = (corner(x0, y0) * (wx0 * wy0) + corner(x1, y0) * (wx1 * wy0)
               + corner(x0, y1) * (wx0 * wy1) + corner(x1, y1) * (wx1 * wy1))
    return out.reshape(n, c, ho, wo)
