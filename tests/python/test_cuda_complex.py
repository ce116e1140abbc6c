"""Complex tensors and ember.fft on CUDA against the CPU: copies, arithmetic,
views, cuFFT transforms, stft, and their gradients. Needs a CUDA GPU and
skips, saying why, without one."""
import numpy as np
import pytest

import ember
import ember.fft as efft
from harness import needs_gpu

pytestmark = needs_gpu

CASES = []  # no OpCase rows: these compare two backends, not ember with numpy

RNG = np.random.default_rng(11)


def crandn(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def on_both(fn, *arrays):
    """fn's value and the gradients of sum(|fn|^2 * w) on the CPU and on CUDA."""
    results = []
    for device in ("cpu", "cuda"):
        xs = [ember.tensor(a, device=device, requires_grad=True) for a in arrays]
        out = fn(*xs)
        weight = ember.linspace(0.5, 1.5, out.numel(), dtype=ember.float64, device=device).reshape(out.shape)
        (out.abs() ** 2 * weight).sum().backward()
        results.append((out.detach().cpu().numpy(), [x.grad.cpu().numpy() for x in xs]))
    return results


def assert_same(results, tol=1e-10):
    (cpu_out, cpu_grads), (cuda_out, cuda_grads) = results
    np.testing.assert_allclose(cuda_out, cpu_out, rtol=tol, atol=tol)
    for got, want in zip(cuda_grads, cpu_grads):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_copies_and_casts():
    a = crandn(3, 4)
    for dtype in (ember.complex64, ember.complex128):
        z = ember.tensor(a, dtype=dtype, device="cuda")
        np.testing.assert_allclose(z.cpu().numpy(), a.astype(np.complex64 if dtype == ember.complex64 else a.dtype),
                                   rtol=1e-6)
        np.testing.assert_array_equal(z.t().contiguous().cpu().numpy(), z.cpu().numpy().T)
        np.testing.assert_array_equal(z.to(ember.float64).cpu().numpy(), z.cpu().numpy().real.astype(np.float64))
    r = ember.tensor(RNG.standard_normal(5), device="cuda")
    assert r.to(ember.complex128).cpu().tolist() == [complex(v) for v in r.cpu().tolist()]
    z = ember.zeros(4, dtype=ember.complex128, device="cuda").fill_(2.5)
    assert z.cpu().tolist() == [2.5 + 0j] * 4
    idx = ember.tensor([2, 0], device="cuda")
    big = ember.tensor(a, device="cuda")
    np.testing.assert_array_equal(big[idx].cpu().numpy(), a[[2, 0]])


@pytest.mark.parametrize("name,fn", [
    ("mul_div", lambda a, b: a * b / (b + 2j)),
    ("exp_log_sqrt", lambda a, b: ember.exp(a) + ember.log(b) * ember.sqrt(a)),
    ("matmul", lambda a, b: a @ b.t()),
    ("sum_mean", lambda a, b: a.sum(0) + b.mean(0)),
    ("polar_views", lambda a, b: ember.polar(a.abs(), b.angle()) + ember.view_as_complex(ember.view_as_real(a))),
    ("where_cat", lambda a, b: ember.cat([ember.where(a.real > 0, a, b), b])),
])
def test_arithmetic_matches_cpu(name, fn):
    assert_same(on_both(fn, crandn(3, 4), crandn(3, 4)))


@pytest.mark.parametrize("name,fn", [
    ("fft", lambda z: efft.fft(z, dim=0)),
    ("ifft_n", lambda z: efft.ifft(z, n=9, norm="ortho")),
    ("fft2", lambda z: efft.fft2(z, norm="forward")),
    ("irfft", lambda z: efft.irfft(z, n=10)),
    ("bluestein", lambda z: efft.fft(z, n=97)),
])
def test_fft_matches_cpu(name, fn):
    assert_same(on_both(fn, crandn(6, 5)))


def test_rfft_float32_and_stft():
    x = RNG.standard_normal((2, 300)).astype(np.float32)
    got = efft.rfft(ember.tensor(x, device="cuda")).cpu().numpy()
    np.testing.assert_allclose(got, np.fft.rfft(x), rtol=1e-4, atol=1e-3)
    for device in ("cpu", "cuda"):
        window = ember.hann_window(64, device=device, dtype=ember.float64)
        spec = ember.stft(ember.tensor(x.astype(np.float64), device=device), 64, hop_length=16, window=window,
                          return_complex=True)
        back = ember.istft(spec, 64, hop_length=16, window=window, length=300)
        np.testing.assert_allclose(back.cpu().numpy(), x, rtol=1e-6, atol=1e-6)
