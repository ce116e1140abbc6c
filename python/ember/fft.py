"""ember.fft: discrete Fourier transforms with torch.fft's functions and arguments.

Every transform is built on three primitives with their gradients (core/ops/fft.h:
the CPU engine in core/cpu/fft_kernel.cpp, cuFFT on the GPU): ``_C._fft_c2c``
(complex to complex along some dims), ``_C._fft_r2c`` (real input to its
one-sided spectrum along one dim) and ``_C._fft_c2r`` (a one-sided Hermitian
spectrum back to real points). Half-precision inputs compute in float32 (ember
has no complex32).

norm: "backward" (the default) leaves the forward transform unscaled and scales
the inverse by 1/n; "ortho" scales both by 1/sqrt(n); "forward" scales the
forward transform by 1/n and leaves the inverse unscaled.
"""
import math

import ember
from ember import _C

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")
_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _scale(norm, n, forward):
    if norm not in _NORMS:
        raise ValueError(f"Invalid normalization mode: {norm!r} (expected 'backward', 'ortho' or 'forward')")
    norm = norm or "backward"
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "backward") == forward:
        return 1.0
    return 1.0 / n


def _float(x, op):
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if x.is_complex():
        return x
    if not x.is_floating_point():
        return x.to(ember.get_default_dtype())
    return x.float() if x.dtype in (ember.float16, ember.bfloat16) else x


def _complex(x, op):
    x = _float(x, op)
    return x if x.is_complex() else x.to(x.dtype.to_complex())


def _real(x, op):
    x = _float(x, op)
    if x.is_complex():
        raise RuntimeError(f"{op} expects a real input tensor, but got {x.dtype}")
    return x


def _check_size(n, op):
    if n < 1:
        raise RuntimeError(f"{op}: Invalid number of data points ({n}) specified")


def _signal_size(n, op):
    """A 1-D transform's n as the s of the n-D ones; unlike an s entry, n = -1 is refused."""
    if n is None:
        return None
    _check_size(n, op)
    return [n]


def _resize(x, dim, n):
    """x zero-padded or trimmed to n elements along dim."""
    size = x.shape[dim]
    if n == size:
        return x
    if n < size:
        return x.narrow(dim, 0, n)
    pad = list(x.shape)
    pad[dim] = n - size
    return ember.cat([x, ember.zeros(pad, dtype=x.dtype, device=x.device)], dim)


def _dims_and_sizes(x, s, dim, op):
    """torch's rules: dims default to the last len(s) dims, or all of them; s entries of -1 keep the size."""
    if dim is None:
        dims = list(range(x.dim() - len(s), x.dim())) if s is not None else list(range(x.dim()))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [d + x.dim() if d < 0 else d for d in dims]
    for d in dims:
        if not 0 <= d < max(x.dim(), 1):
            raise IndexError(f"{op}: dimension {d} is out of range for a {x.dim()}-d tensor")
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dims must be unique, got {dims}")
    if s is None:
        sizes = [x.shape[d] for d in dims]
    else:
        s = list(s)
        if len(s) != len(dims):
            raise RuntimeError(f"{op}: when given, dim and shape arguments must have the same length "
                               f"(got {len(dims)} dims and {len(s)} sizes)")
        sizes = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    for n in sizes:
        _check_size(n, op)
    return dims, sizes


def _c2c(z, dims, forward, scale):
    return _C._fft_c2c(z, dims, forward, scale)


# ---- complex input, complex output

def _fftn(x, s, dim, norm, forward, op):
    z = _complex(x, op)
    dims, sizes = _dims_and_sizes(z, s, dim, op)
    for d, n in zip(dims, sizes):
        z = _resize(z, d, n)
    return _c2c(z, dims, forward, _scale(norm, math.prod(sizes), forward))


def fft(input, n=None, dim=-1, norm=None):
    """The 1-D discrete Fourier transform along dim (zero-padded or trimmed to n)."""
    return _fftn(input, _signal_size(n, "fft"), [dim], norm, True, "fft")


def ifft(input, n=None, dim=-1, norm=None):
    """The 1-D inverse discrete Fourier transform along dim."""
    return _fftn(input, _signal_size(n, "ifft"), [dim], norm, False, "ifft")


def fft2(input, s=None, dim=(-2, -1), norm=None):
    return _fftn(input, s, dim, norm, True, "fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return _fftn(input, s, dim, norm, False, "ifft2")


def fftn(input, s=None, dim=None, norm=None):
    return _fftn(input, s, dim, norm, True, "fftn")


def ifftn(input, s=None, dim=None, norm=None):
    return _fftn(input, s, dim, norm, False, "ifftn")


# ---- real input, one-sided output

def _rfftn(x, s, dim, norm, op):
    x = _real(x, op)
    dims, sizes = _dims_and_sizes(x, s, dim, op)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    for d, n in zip(dims, sizes):
        x = _resize(x, d, n)
    half = _C._fft_r2c(x, dims[-1], _scale(norm, math.prod(sizes), True))
    return _c2c(half, dims[:-1], True, 1.0) if len(dims) > 1 else half


def rfft(input, n=None, dim=-1, norm=None):
    """The one-sided (n // 2 + 1 bins) transform of a real signal."""
    return _rfftn(input, _signal_size(n, "rfft"), [dim], norm, "rfft")


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _rfftn(input, s, dim, norm, "rfft2")


def rfftn(input, s=None, dim=None, norm=None):
    return _rfftn(input, s, dim, norm, "rfftn")


# ---- one-sided input, real output

def _irfftn(x, s, dim, norm, op):
    z = _complex(x, op)
    dims, sizes = _dims_and_sizes(z, None if s is None else [-1] * len(s), dim, op)
    if not dims:
        raise RuntimeError(f"{op} must transform at least one axis")
    last = dims[-1]
    if s is not None:
        sizes = [size if n == -1 else n for size, n in zip(sizes, s)]
    if s is None or s[-1] == -1:
        sizes[-1] = 2 * (z.shape[last] - 1)
    for n in sizes:
        _check_size(n, op)
    for d, n in zip(dims[:-1], sizes[:-1]):
        z = _resize(z, d, n)
    z = _resize(z, last, sizes[-1] // 2 + 1)
    if len(dims) > 1:
        z = _c2c(z, dims[:-1], False, 1.0)  # what remains is Hermitian along the last dim alone
    return _C._fft_c2r(z, last, sizes[-1], _scale(norm, math.prod(sizes), False))


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of rfft: n real samples (2 * (bins - 1) by default) from a one-sided spectrum."""
    return _irfftn(input, _signal_size(n, "irfft"), [dim], norm, "irfft")


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return _irfftn(input, s, dim, norm, "irfft2")


def irfftn(input, s=None, dim=None, norm=None):
    return _irfftn(input, s, dim, norm, "irfftn")


# ---- Hermitian signals: the transforms of rfft / irfft read the other way

def hfft(input, n=None, dim=-1, norm=None):
    """The real spectrum of a signal given by its first half (Hermitian symmetric)."""
    return _irfftn(_complex(input, "hfft").conj(), _signal_size(n, "hfft"), [dim], _SWAPPED[_checked(norm)],
                   "hfft")


def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of hfft: the first half of the signal of a real spectrum."""
    return _rfftn(input, _signal_size(n, "ihfft"), [dim], _SWAPPED[_checked(norm)], "ihfft").conj()


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return _irfftn(_complex(input, "hfft2").conj(), s, dim, _SWAPPED[_checked(norm)], "hfft2")


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return _rfftn(input, s, dim, _SWAPPED[_checked(norm)], "ihfft2").conj()


def hfftn(input, s=None, dim=None, norm=None):
    return _irfftn(_complex(input, "hfftn").conj(), s, dim, _SWAPPED[_checked(norm)], "hfftn")


def ihfftn(input, s=None, dim=None, norm=None):
    return _rfftn(input, s, dim, _SWAPPED[_checked(norm)], "ihfftn").conj()


def _checked(norm):
    _scale(norm, 1, True)
    return norm


# ---- helpers

def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """Sample frequencies of fft(n samples spaced d apart): [0, 1, ..., -2, -1] / (d * n)."""
    k = ember.arange(n, dtype=dtype or ember.get_default_dtype(), device=device)
    out = ember.where(k < (n + 1) // 2, k, k - n) / (d * n)
    return out.requires_grad_(requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """Sample frequencies of rfft(n samples spaced d apart): [0, 1, ..., n // 2] / (d * n)."""
    out = ember.arange(n // 2 + 1, dtype=dtype or ember.get_default_dtype(), device=device) / (d * n)
    return out.requires_grad_(requires_grad)


def _shift_dims(input, dim):
    if dim is None:
        return list(range(input.dim()))
    return [dim] if isinstance(dim, int) else list(dim)


def fftshift(input, dim=None):
    """Moves the zero-frequency bin to the centre."""
    dims = _shift_dims(input, dim)
    return ember.roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of fftshift."""
    dims = _shift_dims(input, dim)
    return ember.roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)
