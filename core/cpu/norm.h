// CPU kernels of the norm family, on contiguous float32 / float64 buffers.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// Normalizes each row of x [rows, cols]: (x - mean) * rstd, or x * rstd for
// RMS norm (rms = true, mean left unwritten and may be undefined), then
// * w[col] + b[col] where w / b are defined ([cols]). Writes the row
// statistics into mean / rstd [rows]. Rows run in parallel.
void row_norm(Tensor& out, Tensor& mean, Tensor& rstd, const Tensor& x, const Tensor& w, const Tensor& b,
              int64_t rows, int64_t cols, double eps, bool rms);
// The backward of row_norm over x, g [rows, cols] (cuda/norm.h's contract):
// gx = rstd * (gxhat - xhat * mean(gxhat * xhat) - mean(gxhat)) with gxhat =
// g * w (RMS drops the last term); gw = sum(g * xhat), gb = sum(g) over the
// rows. gx / gw / gb may be undefined (not wanted), w too. Rows in parallel;
// the column sums add per-thread partials in a fixed order.
void row_norm_backward(Tensor& gx, Tensor& gw, Tensor& gb, const Tensor& g, const Tensor& x, const Tensor& mean,
                       const Tensor& rstd, const Tensor& w, int64_t rows, int64_t cols, bool rms);
// Per-channel mean and biased variance of x [n, c, inner], channels in parallel.
void channel_moments(Tensor& mean, Tensor& var, const Tensor& x, int64_t n, int64_t c, int64_t inner);
// out = x * scale[ch] + shift[ch] over x [n, c, inner].
void channel_affine(Tensor& out, const Tensor& x, const Tensor& scale, const Tensor& shift, int64_t n, int64_t c,
                    int64_t inner);

// Batch norm's backward over x, g [n, c, inner] with per-channel mean / rstd /
// w (w may be undefined): writes gx (when defined) and the per-channel sums
// sum_g = sum(g), sum_gxhat = sum(g * xhat) [c], which are the bias and
// weight gradients. batch_stats: mean and rstd came from x itself, so gx
// carries their derivative terms; otherwise gx = g * w * rstd.
void channel_norm_backward(Tensor& gx, Tensor& sum_g, Tensor& sum_gxhat, const Tensor& g, const Tensor& x,
                           const Tensor& mean, const Tensor& rstd, const Tensor& w, int64_t n, int64_t c,
                           int64_t inner, bool batch_stats);

}  // namespace ember::cpu
