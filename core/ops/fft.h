// The primitives under ember.fft: complex-to-complex, real-to-complex and
// complex-to-real discrete Fourier transforms, on the CPU engine
// (core/cpu/fft_kernel.h) or cuFFT (cuda/fft.h), with their gradients. The
// rest of ember.fft (padding, norm modes, 2-D/n-D forms, Hermitian
// transforms, stft) is composed from them in Python.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// For complex z: the forward (exp(-2πi jk/n)) or inverse (exp(+2πi jk/n))
// transform along each of `dims`, times `scale`. Differentiable: the
// gradient is the opposite transform with the same scale.
Tensor fft_c2c(const Tensor& z, const std::vector<int64_t>& dims, bool forward, double scale);

// For real float32/float64 x: the first n/2 + 1 bins of the forward transform
// along `dim` (n = x.size(dim)), times `scale`. Differentiable.
Tensor fft_r2c(const Tensor& x, int64_t dim, double scale);

// For complex z holding n/2 + 1 bins of a Hermitian spectrum along `dim`: the
// n real points of its inverse transform, times `scale` (the imaginary parts
// of bin 0 and, n even, bin n/2 are ignored). Differentiable.
Tensor fft_c2r(const Tensor& z, int64_t dim, int64_t n, double scale);

}  // namespace ember
