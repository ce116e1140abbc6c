"""ember.fft and stft/istft against numpy.fft always and torch when importable;
gradients against finite differences."""
import numpy as np
import pytest

import ember
import ember.fft as efft

try:
    import torch
except ImportError:  # the comparisons with torch are skipped
    torch = None

RNG = np.random.default_rng(3)
NORMS = [None, "backward", "ortho", "forward"]


def crandn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def close(t, expected, tol=1e-10):
    got = t.detach().numpy()
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 5, 12])
def test_1d_transforms(norm, n):
    a, r = crandn(3, 8), RNG.standard_normal((3, 8))
    za, zr = ember.from_numpy(a), ember.from_numpy(r)
    close(efft.fft(za, n=n, norm=norm), np.fft.fft(a, n=n, norm=norm))
    close(efft.ifft(za, n=n, norm=norm), np.fft.ifft(a, n=n, norm=norm))
    close(efft.fft(zr, n=n, norm=norm), np.fft.fft(r, n=n, norm=norm))
    close(efft.rfft(zr, n=n, norm=norm), np.fft.rfft(r, n=n, norm=norm))
    close(efft.irfft(za, n=n, norm=norm), np.fft.irfft(a, n=n, norm=norm))
    close(efft.hfft(za, n=n, norm=norm), np.fft.hfft(a, n=n, norm=norm))
    close(efft.ihfft(zr, n=n, norm=norm), np.fft.ihfft(r, n=n, norm=norm))


@pytest.mark.parametrize("length", [1, 2, 7, 16, 97, 1000])
def test_lengths_and_dims(length):
    a = crandn(length, 3)
    close(efft.fft(ember.from_numpy(a), dim=0), np.fft.fft(a, axis=0), 1e-9)
    r = RNG.standard_normal((2, length))
    close(efft.irfft(efft.rfft(ember.from_numpy(r)), n=length), r, 1e-9)


@pytest.mark.parametrize("norm", NORMS)
def test_nd_transforms(norm):
    a, r = crandn(2, 4, 6), RNG.standard_normal((2, 4, 6))
    za, zr = ember.from_numpy(a), ember.from_numpy(r)
    close(efft.fft2(za, norm=norm), np.fft.fft2(a, norm=norm))
    close(efft.ifft2(za, norm=norm), np.fft.ifft2(a, norm=norm))
    close(efft.fftn(za, norm=norm), np.fft.fftn(a, norm=norm))
    close(efft.ifftn(za, s=(3, 8), dim=(0, 2), norm=norm), np.fft.ifftn(a, s=(3, 8), axes=(0, 2), norm=norm))
    close(efft.rfft2(zr, norm=norm), np.fft.rfft2(r, norm=norm))
    close(efft.rfftn(zr, s=(5, 4), norm=norm), np.fft.rfftn(r, s=(5, 4), axes=(1, 2), norm=norm))
    close(efft.irfft2(za, norm=norm), np.fft.irfft2(a, norm=norm))
    close(efft.irfftn(za, s=(4, 7), norm=norm), np.fft.irfftn(a, s=(4, 7), axes=(1, 2), norm=norm))
    close(efft.irfftn(za, norm=norm), np.fft.irfftn(a, norm=norm))


def test_float32_and_integer_inputs():
    r = RNG.standard_normal(64).astype(np.float32)
    out = efft.rfft(ember.from_numpy(r))
    assert out.dtype == ember.complex64
    np.testing.assert_allclose(out.numpy(), np.fft.rfft(r), rtol=1e-4, atol=1e-4)
    assert efft.fft(ember.arange(4)).dtype == ember.complex64
    close(efft.fft(ember.arange(4)), np.fft.fft(np.arange(4)), 1e-6)


def test_helpers():
    close(efft.fftfreq(7, d=0.5), np.fft.fftfreq(7, d=0.5), 1e-7)
    close(efft.fftfreq(8), np.fft.fftfreq(8), 1e-7)
    close(efft.rfftfreq(9, d=2.0), np.fft.rfftfreq(9, d=2.0), 1e-7)
    x = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(efft.fftshift(ember.tensor(x)).numpy(), np.fft.fftshift(x))
    np.testing.assert_array_equal(efft.ifftshift(ember.tensor(x), dim=1).numpy(), np.fft.ifftshift(x, axes=1))


def test_errors():
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor"):
        efft.rfft(ember.zeros(4, dtype=ember.complex64))
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        efft.fft(ember.zeros(4), norm="both")
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        efft.fft(ember.zeros(4), n=0)
    # -1 keeps a dim's size in an n-D transform's s, but is no size for a 1-D transform's n.
    for fn in (efft.fft, efft.ifft, efft.rfft, efft.irfft, efft.hfft, efft.ihfft):
        with pytest.raises(RuntimeError, match=r"Invalid number of data points \(-1\)"):
            fn(ember.zeros(4), n=-1)
    assert efft.fftn(ember.zeros(4, 3), s=(-1, 2)).shape == (4, 2)
    with pytest.raises(IndexError, match="out of range"):
        efft.fft(ember.zeros(4), dim=2)


def test_matches_torch():
    if torch is None:
        pytest.skip("torch is not importable")
    a, r = crandn(4, 10), RNG.standard_normal((4, 10))
    for name, arg in [("fft", a), ("ifft", a), ("rfft", r), ("irfft", a), ("hfft", a), ("ihfft", r),
                      ("fft2", a), ("rfftn", r), ("irfftn", a)]:
        expected = getattr(torch.fft, name)(torch.tensor(arg), norm="ortho").resolve_conj().numpy()
        close(getattr(efft, name)(ember.from_numpy(arg), norm="ortho"), expected, 1e-10)


# ---- gradients: a real loss, d/dRe + i d/dIm as in torch

def fd_grad(f, a, eps=1e-6):
    g = np.zeros(a.shape, dtype=a.dtype)
    for idx in np.ndindex(a.shape):
        for unit in ((1, 1j) if np.iscomplexobj(a) else (1,)):
            up, down = a.copy(), a.copy()
            up[idx] += eps * unit
            down[idx] -= eps * unit
            g[idx] += (f(up) - f(down)) / (2 * eps) * unit
    return g


def real_loss(out, w):
    """A real function of every output element: sum(Re(out * w))."""
    if out.is_complex():
        return (ember.view_as_real(out) * ember.view_as_real(w)).sum()
    return (out * w.real).sum()


GRADS = [
    ("fft", lambda z: efft.fft(z, norm="ortho"), True, (5,)),
    ("ifft_n", lambda z: efft.ifft(z, n=7), True, (5,)),
    ("fft2", lambda z: efft.fft2(z, norm="forward"), True, (3, 4)),
    ("rfft", lambda z: efft.rfft(z), False, (6,)),
    ("rfft_odd", lambda z: efft.rfft(z, n=5), False, (6,)),
    ("irfft", lambda z: efft.irfft(z, n=8), True, (5,)),
    ("irfft_odd", lambda z: efft.irfft(z, n=7), True, (4,)),
    ("irfft2", lambda z: efft.irfft2(z, s=(3, 6)), True, (3, 4)),
    ("hfft", lambda z: efft.hfft(z), True, (4,)),
    ("ihfft", lambda z: efft.ihfft(z), False, (6,)),
]


@pytest.mark.parametrize("name,fn,complex_input,shape", GRADS, ids=[g[0] for g in GRADS])
def test_gradients(name, fn, complex_input, shape):
    a = crandn(*shape) if complex_input else RNG.standard_normal(shape)
    out_shape = tuple(fn(ember.from_numpy(a)).shape)
    w = ember.from_numpy(crandn(*out_shape))
    x = ember.from_numpy(a.copy()).requires_grad_()
    real_loss(fn(x), w).backward()
    expected = fd_grad(lambda arr: real_loss(fn(ember.from_numpy(arr)), w).item(), a)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6, atol=1e-6)


# ---- stft / istft

def test_stft_against_numpy_frames():
    x = RNG.standard_normal(200)
    n_fft, hop = 32, 8
    window = np.hanning(n_fft + 1)[:-1]
    spec = ember.stft(ember.from_numpy(x), n_fft, hop_length=hop, window=ember.from_numpy(window),
                      return_complex=True)
    padded = np.pad(x, n_fft // 2, mode="reflect")
    frames = np.stack([padded[i:i + n_fft] for i in range(0, len(padded) - n_fft + 1, hop)])
    expected = np.fft.rfft(frames * window, axis=-1).T
    close(spec, expected, 1e-10)
    if torch is not None:
        t = torch.stft(torch.tensor(x), n_fft, hop_length=hop, window=torch.tensor(window), return_complex=True)
        close(spec, t.numpy(), 1e-10)


def test_stft_options():
    x = ember.from_numpy(RNG.standard_normal((2, 100)))
    spec = ember.stft(x, 16, hop_length=4, win_length=10, center=False, normalized=True, onesided=False,
                      return_complex=True)
    assert spec.shape == (2, 16, (100 - 16) // 4 + 1)
    if torch is not None:
        t = torch.stft(torch.tensor(x.numpy()), 16, hop_length=4, win_length=10, center=False, normalized=True,
                       onesided=False, return_complex=True)
        close(spec, t.numpy(), 1e-10)
    with pytest.raises(RuntimeError, match="return_complex"):
        ember.stft(x, 16)
    assert x.stft(16, return_complex=False).shape == (2, 9, 26, 2)


@pytest.mark.parametrize("center", [True, False])
def test_istft_round_trip(center):
    x = RNG.standard_normal((2, 256))
    # without centre padding the first sample sees only the window's edge, which must not be 0
    window = ember.hann_window(64, dtype=ember.float64) + (0 if center else 0.1)
    spec = ember.stft(ember.from_numpy(x), 64, hop_length=16, window=window, center=center, return_complex=True)
    back = ember.istft(spec, 64, hop_length=16, window=window, center=center, length=256 if center else None)
    expected = x if center else x[:, :back.shape[-1]]
    close(back, expected, 1e-10)
    if torch is not None:
        tspec = torch.tensor(spec.numpy())
        tback = torch.istft(tspec, 64, hop_length=16, window=torch.tensor(window.numpy()),
                            center=center, length=256 if center else None)
        close(back, tback.numpy(), 1e-10)


def test_stft_gradient_flows():
    x = ember.randn(120, dtype=ember.float64, requires_grad=True)
    spec = ember.stft(x, 16, hop_length=4, window=ember.hann_window(16, dtype=ember.float64), return_complex=True)
    spec.abs().pow(2).sum().backward()
    # Parseval-like check: the gradient is finite and non-trivial.
    assert x.grad is not None and ember.isfinite(x.grad).all().item() and x.grad.abs().sum().item() > 0
