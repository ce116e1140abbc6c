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

// The backward of row_norm (batch statistics) for x [rows, cols] and its
// output gradient g (x's dtype), from the saved mean (undefined for RMS) and
// rstd: gx = rstd * (gxhat - xhat * mean(gxhat * xhat) - mean(gxhat)) with
// gxhat = g * w (RMS drops the last term), in x's dtype; gw = sum(g * xhat) and
// gb = sum(g) over the rows, in rstd's dtype. Any of gx / gw / gb may be
// undefined (not wanted); w may be undefined.
void row_norm_backward(Tensor& gx, Tensor& gw, Tensor& gb, const Tensor& g, const Tensor& x, const Tensor& mean,
                       const Tensor& rstd, const Tensor& w, int64_t rows, int64_t cols, bool rms);

// Batch norm's kernels with cpu/norm.h's contracts, on contiguous float32 or
// float64 buffers (the front-end computes half types in float32), one block
// per channel for the reductions.
// Per-channel mean and biased variance of x [n, c, inner].
void channel_moments(Tensor& mean, Tensor& var, const Tensor& x, int64_t n, int64_t c, int64_t inner);
// out = x * scale[ch] + shift[ch] over x [n, c, inner].
void channel_affine(Tensor& out, const Tensor& x, const Tensor& scale, const Tensor& shift, int64_t n, int64_t c,
                    int64_t inner);
// cpu::channel_norm_backward: gx (when defined) and the per-channel sums
// sum_g = sum(g), sum_gxhat = sum(g * xhat).
void channel_norm_backward(Tensor& gx, Tensor& sum_g, Tensor& sum_gxhat, const Tensor& g, const Tensor& x,
                           const Tensor& mean, const Tensor& rstd, const Tensor& w, int64_t n, int64_t c,
                           int64_t inner, bool batch_stats);

}  // namespace ember::cuda
