// embedding on the GPU: a row gather forward, and a backward that adds each
// gradient row into its weight row with atomicAdd (one thread per element;
// float16 and bfloat16 atomics need sm_70 / sm_80, below every architecture
// ember builds for). Fused dropout: one Philox pass writing the output and
// the bool mask (cuda/device/dropout_kernels.cuh), and its backward as one
// elementwise pass (cuda/device/loops.cuh).
#include <ember/cuda/nn_misc.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/dropout_kernels.cuh>
#include <ember/cuda/device/embedding_kernels.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

// kThreads (256) comes from cuda/device/loops_kernels.cuh. The embedding
// kernels are in cuda/device/embedding_kernels.cuh.

unsigned blocks_for(int64_t total) {
  const int64_t b = (total + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? b : 65535 * 8);  // grid-stride loops cover the rest
}

// The backward's functor, in a named template (nvcc refuses extended lambdas
// inside generic lambdas).
template <class T>
void dropout_backward_typed(const TensorIterator& iter, double scale) {
  const DropoutCompute<T> kept_scale = static_cast<DropoutCompute<T>>(scale);
  launch<T, T, bool>(iter, [kept_scale] __device__(T g, bool keep) { return dropout_value(g, keep, kept_scale); });
}

}  // namespace

void embedding_forward(Tensor& out, const Tensor& weight, const Tensor& indices) {
  const int64_t n = indices.numel(), dim = weight.size(1);
  if (n * dim == 0) return;
  const int index = weight.device().index;
  DeviceGuard guard(index);
  dispatch_device_float(weight.dtype(), "embedding", [&](auto tag) {
    using T = decltype(tag);
    gather_rows_kernel<T><<<blocks_for(n * dim), kThreads, 0, current_cuda_stream(index)>>>(
        static_cast<T*>(out.data_ptr()), static_cast<const T*>(weight.data_ptr()),
        static_cast<const int64_t*>(indices.data_ptr()), n, dim);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void embedding_backward(Tensor& grad_weight, const Tensor& grad_rows, const Tensor& indices) {
  const int64_t n = indices.numel(), dim = grad_weight.size(1);
  const int index = grad_weight.device().index;
  DeviceGuard guard(index);
  EMBER_CUDA_CHECK(cudaMemsetAsync(grad_weight.data_ptr(), 0, grad_weight.numel() * itemsize(grad_weight.dtype()),
                                   current_cuda_stream(index)));
  if (n * dim == 0) return;
  dispatch_device_float(grad_weight.dtype(), "embedding_backward", [&](auto tag) {
    using T = decltype(tag);
    scatter_add_rows_kernel<T><<<blocks_for(n * dim), kThreads, 0, current_cuda_stream(index)>>>(
        static_cast<T*>(grad_weight.data_ptr()), static_cast<const T*>(grad_rows.data_ptr()),
        static_cast<const int64_t*>(indices.data_ptr()), n, dim);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void native_dropout(Tensor& out, Tensor& mask, const Tensor& input, uint64_t threshold, double scale,
                    const PhiloxStream& s) {
  const int64_t n = input.numel();
  if (n == 0) return;
  const int index = input.device().index;
  DeviceGuard guard(index);
  dispatch_device_float(input.dtype(), "native_dropout", [&](auto tag) {
    using T = decltype(tag);
    const auto* in = static_cast<const T*>(input.data_ptr());
    auto* o = static_cast<T*>(out.data_ptr());
    auto* m = static_cast<bool*>(mask.data_ptr());
    const bool vectorized = dropout_vector_aligned<T>(in, o, m);
    const int64_t counter_blocks = (n + kDropoutVec - 1) / kDropoutVec;
    native_dropout_kernel<T><<<blocks_for(counter_blocks), kThreads, 0, current_cuda_stream(index)>>>(
        in, o, m, n, threshold, static_cast<DropoutCompute<T>>(scale), s.seed, s.offset, vectorized);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void native_dropout_backward(Tensor& grad_input, const Tensor& grad, const Tensor& mask, double scale) {
  DeviceGuard guard(grad_input.device().index);
  const TensorIterator iter({grad_input, grad, mask});
  dispatch_device_float(grad.dtype(), "native_dropout_backward",
                        [&](auto tag) { dropout_backward_typed<decltype(tag)>(iter, scale); });
}

}  // namespace ember::cuda
