// The row normalization kernels (layer_norm, rms_norm, group_norm's
// statistics: one block per row) and batch norm's per-channel kernels;
// cuda/norm.cu launches them. Device code only, in a header so that
// tests/cpp/test_row_kernels_emulation.cpp runs the same source on the CPU
// (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>

#include <ember/cuda/device/block_reduce.cuh>
#include <ember/cuda/device/float_access.cuh>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

// Threads of a row-norm block: enough to cover short rows in one sweep, a
// power of two from one warp to 1024.
inline int row_norm_threads(int64_t cols) {
  int threads = kWarpSize;
  while (threads < cols && threads < 1024) threads *= 2;
  return threads;
}

// Pass 1 sums the row for its mean, pass 2 sums the squared deviations (two
// passes over a row that stays in L2/L1 are more accurate than sum and sum of
// squares), pass 3 writes the output. Statistics and w / b in Acc<T>.
template <class T>
__global__ void row_norm_kernel(T* out, typename Acc<T>::type* mean_out, typename Acc<T>::type* rstd_out,
                                const T* x, const typename Acc<T>::type* w, const typename Acc<T>::type* b,
                                int64_t cols, double eps, bool rms) {
  using A = typename Acc<T>::type;
  __shared__ A shared[kMaxWarps];
  const int64_t row = blockIdx.x;
  const T* xr = x + row * cols;
  T* yr = out + row * cols;
  A mu = 0;
  if (!rms) {
    A s = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += load(xr, j);
    mu = block_sum(s, shared) / static_cast<A>(cols);
  }
  A ss = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const A d = load(xr, j) - mu;
    ss += d * d;
  }
  const A var = block_sum(ss, shared) / static_cast<A>(cols);
  const A rs = static_cast<A>(1) / sqrt(var + static_cast<A>(eps));
  if (threadIdx.x == 0) {
    if (mean_out) mean_out[row] = mu;
    rstd_out[row] = rs;
  }
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    A v = (load(xr, j) - mu) * rs;
    if (w) v *= w[j];
    if (b) v += b[j];
    store(yr, j, v);
  }
}

// ---- row norm backward: one block per row for gx, one thread per column for gw / gb.

template <class T>
__global__ void row_norm_backward_kernel(T* gx, const T* g, const T* x, const typename Acc<T>::type* mean,
                                         const typename Acc<T>::type* rstd, const typename Acc<T>::type* w,
                                         int64_t cols) {
  using A = typename Acc<T>::type;
  __shared__ A shared[kMaxWarps];
  const int64_t row = blockIdx.x;
  const T* gr = g + row * cols;
  const T* xr = x + row * cols;
  const A mu = mean ? mean[row] : A(0), rs = rstd[row];
  A s_g = 0, s_gx = 0;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const A gxh = static_cast<A>(load(gr, j)) * (w ? w[j] : A(1));
    s_g += gxh;
    s_gx += gxh * ((load(xr, j) - mu) * rs);
  }
  const A mean_g = mean ? block_sum(s_g, shared) / static_cast<A>(cols) : A(0);
  const A mean_gx = block_sum(s_gx, shared) / static_cast<A>(cols);
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const A gxh = static_cast<A>(load(gr, j)) * (w ? w[j] : A(1));
    const A xhat = (load(xr, j) - mu) * rs;
    store(gx + row * cols, j, (gxh - xhat * mean_gx - mean_g) * rs);
  }
}

template <class T>
__global__ void row_norm_param_grads_kernel(typename Acc<T>::type* gw, typename Acc<T>::type* gb, const T* g,
                                            const T* x, const typename Acc<T>::type* mean,
                                            const typename Acc<T>::type* rstd, int64_t rows, int64_t cols) {
  using A = typename Acc<T>::type;
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < cols; j += int64_t{gridDim.x} * blockDim.x) {
    A sw = 0, sb = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const A gv = load(g, r * cols + j);
      sw += gv * ((load(x, r * cols + j) - (mean ? mean[r] : A(0))) * rstd[r]);
      sb += gv;
    }
    if (gw) gw[j] = sw;
    if (gb) gb[j] = sb;
  }
}

// ---- batch norm: one block per channel reduces over its n * inner values.

template <class T>
__global__ void channel_moments_kernel(T* mean, T* var, const T* x, int64_t n, int64_t c, int64_t inner) {
  __shared__ T shared[kMaxWarps];
  const int64_t ch = blockIdx.x, count = n * inner;
  T s = 0;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) s += x[((k / inner) * c + ch) * inner + k % inner];
  const T m = block_sum(s, shared) / static_cast<T>(count);
  T ss = 0;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    const T d = x[((k / inner) * c + ch) * inner + k % inner] - m;
    ss += d * d;
  }
  const T v = block_sum(ss, shared) / static_cast<T>(count);
  if (threadIdx.x == 0) {
    mean[ch] = m;
    var[ch] = v;
  }
}

template <class T>
__global__ void channel_affine_kernel(T* out, const T* x, const T* scale, const T* shift, int64_t c, int64_t inner,
                                      int64_t total) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < total; k += int64_t{gridDim.x} * blockDim.x) {
    const int64_t ch = (k / inner) % c;
    out[k] = x[k] * scale[ch] + shift[ch];
  }
}

template <class T>
__global__ void channel_sums_kernel(T* sum_g, T* sum_gxhat, const T* g, const T* x, const T* mean, const T* rstd,
                                    int64_t n, int64_t c, int64_t inner) {
  __shared__ T shared[kMaxWarps];
  const int64_t ch = blockIdx.x, count = n * inner;
  const T m = mean[ch], r = rstd[ch];
  T sg = 0, sx = 0;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    const int64_t i = ((k / inner) * c + ch) * inner + k % inner;
    sg += g[i];
    sx += g[i] * ((x[i] - m) * r);
  }
  sg = block_sum(sg, shared);
  sx = block_sum(sx, shared);
  if (threadIdx.x == 0) {
    sum_g[ch] = sg;
    sum_gxhat[ch] = sx;
  }
}

template <class T>
__global__ void channel_grad_kernel(T* gx, const T* g, const T* x, const T* mean, const T* rstd, const T* w,
                                    const T* sum_g, const T* sum_gxhat, int64_t c, int64_t inner, int64_t total,
                                    bool batch_stats) {
  const T count = static_cast<T>(total / c);
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < total; k += int64_t{gridDim.x} * blockDim.x) {
    const int64_t ch = (k / inner) % c;
    const T m = mean[ch], r = rstd[ch], scale = r * (w ? w[ch] : T(1));
    gx[k] = batch_stats ? scale * (g[k] - sum_g[ch] / count - (x[k] - m) * r * (sum_gxhat[ch] / count))
                        : scale * g[k];
  }
}

}  // namespace
}  // namespace ember::cuda
