// Row normalization (layer_norm, rms_norm, group_norm's statistics) and
// batch norm's per-channel kernels on the GPU. Row norms: one block per row. Pass 1 sums the row for its mean, pass 2 sums the
// squared deviations (two passes over a row that stays in L2/L1 are more
// accurate than sum and sum of squares), pass 3 writes the output.
#include <ember/cuda/norm.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/block_reduce.cuh>
#include <ember/cuda/device/float_access.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

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

template <class T, class A = typename Acc<T>::type>
void launch(Tensor& out, Tensor& mean, Tensor& rstd, const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows,
            int64_t cols, double eps, bool rms) {
  // Enough threads to cover short rows in one sweep, at most 1024.
  int threads = kWarpSize;
  while (threads < cols && threads < 1024) threads *= 2;
  const int index = x.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  EMBER_CHECK(rows <= 0x7fffffff, Error, "row_norm: ", rows, " rows exceed the CUDA grid limit");
  row_norm_kernel<T><<<static_cast<unsigned>(rows), threads, 0, stream>>>(
      static_cast<T*>(out.data_ptr()), mean.defined() && !rms ? static_cast<A*>(mean.data_ptr()) : nullptr,
      static_cast<A*>(rstd.data_ptr()), static_cast<const T*>(x.data_ptr()),
      w.defined() ? static_cast<const A*>(w.data_ptr()) : nullptr,
      b.defined() ? static_cast<const A*>(b.data_ptr()) : nullptr, cols, eps, rms);
  EMBER_CUDA_KERNEL_CHECK();
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

template <class T, class A = typename Acc<T>::type>
void launch_backward(Tensor& gx, Tensor& gw, Tensor& gb, const Tensor& g, const Tensor& x, const Tensor& mean,
                     const Tensor& rstd, const Tensor& w, int64_t rows, int64_t cols, bool rms) {
  const int index = x.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  const A* mp = mean.defined() && !rms ? static_cast<const A*>(mean.data_ptr()) : nullptr;
  const A* rp = static_cast<const A*>(rstd.data_ptr());
  if (gx.defined()) {
    int threads = kWarpSize;
    while (threads < cols && threads < 1024) threads *= 2;
    EMBER_CHECK(rows <= 0x7fffffff, Error, "row_norm_backward: ", rows, " rows exceed the CUDA grid limit");
    row_norm_backward_kernel<T><<<static_cast<unsigned>(rows), threads, 0, stream>>>(
        static_cast<T*>(gx.data_ptr()), static_cast<const T*>(g.data_ptr()), static_cast<const T*>(x.data_ptr()), mp,
        rp, w.defined() ? static_cast<const A*>(w.data_ptr()) : nullptr, cols);
    EMBER_CUDA_KERNEL_CHECK();
  }
  if (gw.defined() || gb.defined()) {
    const int64_t blocks = (cols + 255) / 256;
    row_norm_param_grads_kernel<T><<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(
        gw.defined() ? static_cast<A*>(gw.data_ptr()) : nullptr, gb.defined() ? static_cast<A*>(gb.data_ptr()) : nullptr,
        static_cast<const T*>(g.data_ptr()), static_cast<const T*>(x.data_ptr()), mp, rp, rows, cols);
    EMBER_CUDA_KERNEL_CHECK();
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

unsigned grid_for(int64_t total) {
  const int64_t b = (total + 255) / 256;
  return static_cast<unsigned>(b < 65535 * 8 ? b : 65535 * 8);
}

template <class F>
void dispatch_float_double(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    default: throw NotImplementedError(str(op, ": not implemented for ", dtype_name(d), " on CUDA"));
  }
}

}  // namespace

void channel_moments(Tensor& mean, Tensor& var, const Tensor& x, int64_t n, int64_t c, int64_t inner) {
  if (c == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  dispatch_float_double(x.dtype(), "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    channel_moments_kernel<T><<<static_cast<unsigned>(c), 512, 0, current_cuda_stream(index)>>>(
        static_cast<T*>(mean.data_ptr()), static_cast<T*>(var.data_ptr()), static_cast<const T*>(x.data_ptr()), n, c,
        inner);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void channel_affine(Tensor& out, const Tensor& x, const Tensor& scale, const Tensor& shift, int64_t n, int64_t c,
                    int64_t inner) {
  const int64_t total = n * c * inner;
  if (total == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  dispatch_float_double(x.dtype(), "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    channel_affine_kernel<T><<<grid_for(total), 256, 0, current_cuda_stream(index)>>>(
        static_cast<T*>(out.data_ptr()), static_cast<const T*>(x.data_ptr()), static_cast<const T*>(scale.data_ptr()),
        static_cast<const T*>(shift.data_ptr()), c, inner, total);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void channel_norm_backward(Tensor& gx, Tensor& sum_g, Tensor& sum_gxhat, const Tensor& g, const Tensor& x,
                           const Tensor& mean, const Tensor& rstd, const Tensor& w, int64_t n, int64_t c,
                           int64_t inner, bool batch_stats) {
  if (c == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  dispatch_float_double(x.dtype(), "batch_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    channel_sums_kernel<T><<<static_cast<unsigned>(c), 512, 0, stream>>>(
        static_cast<T*>(sum_g.data_ptr()), static_cast<T*>(sum_gxhat.data_ptr()), static_cast<const T*>(g.data_ptr()),
        static_cast<const T*>(x.data_ptr()), static_cast<const T*>(mean.data_ptr()),
        static_cast<const T*>(rstd.data_ptr()), n, c, inner);
    EMBER_CUDA_KERNEL_CHECK();
    const int64_t total = n * c * inner;
    if (!gx.defined() || total == 0) return;
    channel_grad_kernel<T><<<grid_for(total), 256, 0, stream>>>(
        static_cast<T*>(gx.data_ptr()), static_cast<const T*>(g.data_ptr()), static_cast<const T*>(x.data_ptr()),
        static_cast<const T*>(mean.data_ptr()), static_cast<const T*>(rstd.data_ptr()),
        w.defined() ? static_cast<const T*>(w.data_ptr()) : nullptr, static_cast<const T*>(sum_g.data_ptr()),
        static_cast<const T*>(sum_gxhat.data_ptr()), c, inner, total, batch_stats);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void row_norm_backward(Tensor& gx, Tensor& gw, Tensor& gb, const Tensor& g, const Tensor& x, const Tensor& mean,
                       const Tensor& rstd, const Tensor& w, int64_t rows, int64_t cols, bool rms) {
  if (rows == 0 || cols == 0) return;
  switch (x.dtype()) {
    case DType::Float32: return launch_backward<float>(gx, gw, gb, g, x, mean, rstd, w, rows, cols, rms);
    case DType::Float64: return launch_backward<double>(gx, gw, gb, g, x, mean, rstd, w, rows, cols, rms);
    case DType::Float16: return launch_backward<__half>(gx, gw, gb, g, x, mean, rstd, w, rows, cols, rms);
    case DType::BFloat16: return launch_backward<__nv_bfloat16>(gx, gw, gb, g, x, mean, rstd, w, rows, cols, rms);
    default:
      throw NotImplementedError(str("layer_norm backward: not implemented for ", dtype_name(x.dtype()), " on CUDA"));
  }
}

void row_norm(Tensor& out, Tensor& mean, Tensor& rstd, const Tensor& x, const Tensor& w, const Tensor& b,
              int64_t rows, int64_t cols, double eps, bool rms) {
  if (rows == 0) return;
  switch (x.dtype()) {
    case DType::Float32: return launch<float>(out, mean, rstd, x, w, b, rows, cols, eps, rms);
    case DType::Float64: return launch<double>(out, mean, rstd, x, w, b, rows, cols, eps, rms);
    case DType::Float16: return launch<__half>(out, mean, rstd, x, w, b, rows, cols, eps, rms);
    case DType::BFloat16: return launch<__nv_bfloat16>(out, mean, rstd, x, w, b, rows, cols, eps, rms);
    default: throw NotImplementedError(str("row_norm: not implemented for ", dtype_name(x.dtype()), " on CUDA"));
  }
}

}  // namespace ember::cuda
