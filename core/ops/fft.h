// The primitive under ember.fft: complex-to-complex discrete Fourier
// transforms along some dims, on the CPU engine (core/cpu/fft_kernel.h) or
// cuFFT (cuda/fft.h). The rest of ember.fft (real input, Hermitian output,
// padding, norm modes, 2-D/n-D forms, stft) is composed from it in Python.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// For complex z: the forward (exp(-2πi jk/n)) or inverse (exp(+2πi jk/n))
// transform along each of `dims`, times `scale`. Differentiable: the
// gradient is the opposite transform with the same scale.
Tensor fft_c2c(const Tensor& z, const std::vector<int64_t>& dims, bool forward, double scale);

}  // namespace ember
