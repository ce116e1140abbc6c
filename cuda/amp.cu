// GradScaler's unscale pass on the GPU: one grid-stride kernel per gradient,
// reading the inverse scale from device memory and raising the found_inf flag
// there (every writer writes 1, so the race is benign). The kernels are in
// cuda/device/amp_kernels.cuh; this file launches them.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <ember/core/error.h>
#include <ember/core/tensor.h>
#include <ember/cuda/amp.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/amp_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {
namespace {

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
