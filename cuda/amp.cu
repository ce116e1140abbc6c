// GradScaler's unscale pass on the GPU: one grid-stride kernel per gradient,
// reading the inverse scale from device memory and raising the found_inf flag
// there (every writer writes 1, so the race is benign).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <ember/core/error.h>
#include <ember/core/tensor.h>
#include <ember/cuda/amp.h>
#include <ember/cuda/context.h>
#include <ember/cuda/error.h>

namespace ember::cuda {
namespace {

__device__ inline float load(const __half* p) { return __half2float(*p); }
__device__ inline float load(const __nv_bfloat16* p) { return __bfloat162float(*p); }
__device__ inline float load(const float* p) { return *p; }
__device__ inline double load(const double* p) { return *p; }
__device__ inline void store(__half* p, float v) { *p = __float2half(v); }
__device__ inline void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }
__device__ inline void store(float* p, float v) { *p = v; }
__device__ inline void store(double* p, double v) { *p = v; }

template <class T, class C>
__global__ void unscale_kernel(T* data, int64_t n, float* found_inf, const float* inv_scale) {
  const C inv = static_cast<C>(*inv_scale);
  bool bad = false;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const C v = load(data + i);
    bad |= !isfinite(v);
    store(data + i, v * inv);
  }
  if (bad) *found_inf = 1.0f;
}

template <class T, class C>
void launch(const Tensor& grad, const Tensor& found_inf, const Tensor& inv_scale, cudaStream_t stream) {
  const int64_t n = grad.numel();
  constexpr int kThreads = 256;
  const int64_t want = (n + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(want < 4096 ? want : 4096);
  unscale_kernel<T, C><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(grad.data_ptr()), n,
                                                        static_cast<float*>(found_inf.data_ptr()),
                                                        static_cast<const float*>(inv_scale.data_ptr()));
  EMBER_CUDA_KERNEL_CHECK();
}

__global__ void update_scale_kernel(float* scale, int* growth_tracker, const float* found_inf, double growth_factor,
                                    double backoff_factor, int64_t growth_interval) {
  if (*found_inf != 0.0f) {
    *scale = static_cast<float>(*scale * backoff_factor);
    *growth_tracker = 0;
    return;
  }
  const int64_t successful = *growth_tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(*scale * growth_factor);
    if (isfinite(grown)) *scale = grown;
    *growth_tracker = 0;
  } else {
    *growth_tracker = static_cast<int>(successful);
  }
}

}  // namespace

void amp_update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                      double growth_factor, double backoff_factor, int64_t growth_interval) {
  const int index = scale.device().index;
  DeviceGuard guard(index);
  update_scale_kernel<<<1, 1, 0, current_cuda_stream(index)>>>(
      static_cast<float*>(scale.data_ptr()), static_cast<int*>(growth_tracker.data_ptr()),
      static_cast<const float*>(found_inf.data_ptr()), growth_factor, backoff_factor, growth_interval);
  EMBER_CUDA_KERNEL_CHECK();
}

void amp_unscale_and_check(const Tensor& grad, const Tensor& found_inf, const Tensor& inv_scale) {
  if (grad.numel() == 0) return;
  const int index = grad.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  switch (grad.dtype()) {
    case DType::Float16: return launch<__half, float>(grad, found_inf, inv_scale, stream);
    case DType::BFloat16: return launch<__nv_bfloat16, float>(grad, found_inf, inv_scale, stream);
    case DType::Float32: return launch<float, float>(grad, found_inf, inv_scale, stream);
    case DType::Float64: return launch<double, double>(grad, found_inf, inv_scale, stream);
    default:
      throw Error(str("_amp_foreach_non_finite_check_and_unscale_: no CUDA kernel for dtype ",
                      dtype_name(grad.dtype())));
  }
}

}  // namespace ember::cuda
