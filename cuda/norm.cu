// Row normalization (layer_norm, rms_norm, group_norm's statistics) on the
// GPU: one block per row. Pass 1 sums the row for its mean, pass 2 sums the
// squared deviations (two passes over a row that stays in L2/L1 are more
// accurate than sum and sum of squares), pass 3 writes the output.
#include <ember/cuda/norm.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

constexpr int kWarp = 32;

template <class T> struct Acc { using type = float; };
template <> struct Acc<double> { using type = double; };

__device__ __forceinline__ float load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ double load(const double* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float load(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void store(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(double* p, int64_t i, double v) { p[i] = v; }
__device__ __forceinline__ void store(__half* p, int64_t i, float v) { p[i] = __float2half(v); }
__device__ __forceinline__ void store(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16(v); }

// Sum of v over the block; every thread gets the result. `shared` holds one
// value per warp; the trailing __syncthreads lets the caller reuse it.
template <class A>
__device__ A block_sum(A v, A* shared) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + kWarp - 1) / kWarp;
  A total = 0;
  for (int i = 0; i < warps; ++i) total += shared[i];
  __syncthreads();
  return total;
}

template <class T>
__global__ void row_norm_kernel(T* out, typename Acc<T>::type* mean_out, typename Acc<T>::type* rstd_out,
                                const T* x, const typename Acc<T>::type* w, const typename Acc<T>::type* b,
                                int64_t cols, double eps, bool rms) {
  using A = typename Acc<T>::type;
  __shared__ A shared[1024 / kWarp];
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
  int threads = kWarp;
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

}  // namespace

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
