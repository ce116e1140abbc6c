// CUDA kernels of the norm family. No CUDA headers here: the core calls
// these; a CPU build links cuda/no_cuda_nn.cpp instead.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

// cpu::row_norm's contract on the GPU, one block per row: normalizes each row
// of x [rows, cols] (contiguous, float32/float64/float16/bfloat16):
// (x - mean) * rstd, or x * rstd for RMS norm (rms = true; mean may then be
// undefined), then * w[col] + b[col] where w / b are defined ([cols],
// contiguous, float64 for float64 x, else float32). out has x's dtype and is
// contiguous; mean / rstd [rows] are float64 for float64 x, else float32.
// Accumulates in float32 (float64 for float64).
void row_norm(Tensor& out, Tensor& mean, Tensor& rstd, const Tensor& x, const Tensor& w, const Tensor& b,
              int64_t rows, int64_t cols, double eps, bool rms);

}  // namespace ember::cuda
