// Row normalization (layer_norm, rms_norm, group_norm's statistics) and
// batch norm's per-channel kernels on the GPU. Row norms: one block per row;
// their weight / bias gradients: column sums split into row chunks. Batch
// norm's per-channel sums: blocks over chunks of a channel when there are too
// few channels to fill the GPU.
// The kernels are in cuda/device/norm_kernels.cuh; this file launches them.
#include <ember/cuda/norm.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/norm_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

unsigned grid_for(int64_t total) {
  const int64_t b = (total + 255) / 256;
  return static_cast<unsigned>(b < 65535 * 8 ? b : 65535 * 8);
}

template <class T, class A = typename Acc<T>::type>
void launch(Tensor& out, Tensor& mean, Tensor& rstd, const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows,
            int64_t cols, double eps, bool rms) {
  const int threads = row_norm_threads(cols);
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

template <class T, class A = typename Acc<T>::type>
void launch_backward(Tensor& gx, Tensor& gw, Tensor& gb, const Tensor& g, const Tensor& x, const Tensor& mean,
                     const Tensor& rstd, const Tensor& w, int64_t rows, int64_t cols, bool rms) {
  const int index = x.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  const A* mp = mean.defined() && !rms ? static_cast<const A*>(mean.data_ptr()) : nullptr;
  const A* rp = static_cast<const A*>(rstd.data_ptr());
  if (gx.defined()) {
    const int threads = row_norm_threads(cols);
    EMBER_CHECK(rows <= 0x7fffffff, Error, "row_norm_backward: ", rows, " rows exceed the CUDA grid limit");
    row_norm_backward_kernel<T><<<static_cast<unsigned>(rows), threads, 0, stream>>>(
        static_cast<T*>(gx.data_ptr()), static_cast<const T*>(g.data_ptr()), static_cast<const T*>(x.data_ptr()), mp,
        rp, w.defined() ? static_cast<const A*>(w.data_ptr()) : nullptr, cols);
    EMBER_CUDA_KERNEL_CHECK();
  }
  if (gw.defined() || gb.defined()) {
    // Column sums over the rows, split into row chunks (norm_kernels.cuh's
    // param_grad_plan) so that thousands of rows fill the GPU.
    const ParamGradPlan plan = param_grad_plan(rows, cols, Registry::get().device(index).props.multiProcessorCount);
    A* const wp = gw.defined() ? static_cast<A*>(gw.data_ptr()) : nullptr;
    A* const bp = gb.defined() ? static_cast<A*>(gb.data_ptr()) : nullptr;
    Tensor part;  // [2, chunks, cols]: the chunks' sums of g * xhat, then of g
    A* pw = wp;
    A* pb = bp;
    if (plan.chunks > 1) {
      part = ember::empty({2, plan.chunks, cols}, std::is_same_v<A, double> ? DType::Float64 : DType::Float32,
                          x.device());
      A* const base = static_cast<A*>(part.data_ptr());
      pw = wp ? base : nullptr;
      pb = bp ? base + plan.chunks * cols : nullptr;
    }
    const dim3 grid(static_cast<unsigned>(plan.tiles < 65535 ? plan.tiles : 65535), static_cast<unsigned>(plan.chunks));
    row_norm_param_grads_kernel<T><<<grid, dim3(kParamTileCols, kParamRowLanes), 0, stream>>>(
        pw, pb, static_cast<const T*>(g.data_ptr()), static_cast<const T*>(x.data_ptr()), mp, rp, rows, cols,
        plan.chunk_rows);
    EMBER_CUDA_KERNEL_CHECK();
    if (plan.chunks > 1) {
      row_norm_param_finish_kernel<A><<<grid_for(cols), 256, 0, stream>>>(wp, bp, pw, pb, plan.chunks, cols);
      EMBER_CUDA_KERNEL_CHECK();
    }
  }
}

template <class F>
void dispatch_float_double(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    default: throw NotImplementedError(str(op, ": not implemented for ", dtype_name(d), " on CUDA"));
  }
}

// Per-channel sums of kind kWhat into a (and b for the gradient sums), each
// divided by `divisor`: one kernel when a block per channel fills the GPU,
// else blocks over chunks of each channel writing partial sums, and a second
// kernel adding them per channel in a fixed order.
template <class T, ChannelSum kWhat>
void channel_sums(T* a, T* b, const Tensor& x, const T* g, const T* mean, const T* rstd, int64_t n, int64_t c,
                  int64_t inner, T divisor, cudaStream_t stream) {
  EMBER_CHECK(c <= 0x7fffffff, Error, "batch_norm: ", c, " channels exceed the CUDA grid limit");
  const int index = x.device().index;
  const int64_t count = n * inner;
  const int64_t splits = channel_splits(c, count, Registry::get().device(index).props.multiProcessorCount);
  const int64_t chunk = splits > 1 ? (count + splits - 1) / splits : count;
  const T* xp = static_cast<const T*>(x.data_ptr());
  const dim3 grid(static_cast<unsigned>(c), static_cast<unsigned>(splits));
  if (splits == 1) {
    channel_sums_kernel<T, kWhat><<<grid, kChannelThreads, 0, stream>>>(a, b, xp, g, mean, rstd, n, c, inner, chunk,
                                                                         divisor);
    EMBER_CUDA_KERNEL_CHECK();
    return;
  }
  Tensor part = ember::empty({2, c, splits}, x.dtype(), x.device());  // [c, splits] for a, then for b
  T* const pa = static_cast<T*>(part.data_ptr());
  T* const pb = b ? pa + c * splits : nullptr;
  channel_sums_kernel<T, kWhat><<<grid, kChannelThreads, 0, stream>>>(pa, pb, xp, g, mean, rstd, n, c, inner, chunk,
                                                                       T(1));
  EMBER_CUDA_KERNEL_CHECK();
  channel_finish_kernel<T><<<grid_for(c), 256, 0, stream>>>(a, b, pa, pb, c, splits, divisor);
  EMBER_CUDA_KERNEL_CHECK();
}

}  // namespace

void channel_moments(Tensor& mean, Tensor& var, const Tensor& x, int64_t n, int64_t c, int64_t inner) {
  if (c == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  dispatch_float_double(x.dtype(), "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    T* const mp = static_cast<T*>(mean.data_ptr());
    const T count = static_cast<T>(n * inner);
    // Two passes, as on the CPU: the mean, then the squared deviations from it.
    channel_sums<T, ChannelSum::kX>(mp, nullptr, x, nullptr, nullptr, nullptr, n, c, inner, count, stream);
    channel_sums<T, ChannelSum::kSquaredDeviation>(static_cast<T*>(var.data_ptr()), nullptr, x, nullptr, mp, nullptr, n,
                                                   c, inner, count, stream);
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
    channel_sums<T, ChannelSum::kGradient>(static_cast<T*>(sum_g.data_ptr()), static_cast<T*>(sum_gxhat.data_ptr()), x,
                                           static_cast<const T*>(g.data_ptr()), static_cast<const T*>(mean.data_ptr()),
                                           static_cast<const T*>(rstd.data_ptr()), n, c, inner, T(1), stream);
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
