// cross_entropy on class indices, fused with log_softmax, on the GPU: one
// block per position, its threads striding over the classes (coalesced for
// the usual [N, C] input, where inner == 1). The forward keeps logsumexp per
// position so the backward needs one pass: softmax = exp(x - lse). The
// kernels are in cuda/device/loss_kernels.cuh; this file launches them.
#include <ember/cuda/loss.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loss_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

template <class T>
void forward(Tensor& loss, Tensor& wt, Tensor& lse, const Tensor& x, const Tensor& target, const Tensor& weight,
             int64_t ignore_index, int64_t positions, int64_t classes, int64_t inner) {
  using A = typename Acc<T>::type;
  const int index = x.device().index;
  DeviceGuard guard(index);
  ce_forward_kernel<T, A><<<static_cast<unsigned>(positions), kLossThreads, 0, current_cuda_stream(index)>>>(
      static_cast<A*>(loss.data_ptr()), static_cast<A*>(wt.data_ptr()), static_cast<A*>(lse.data_ptr()),
      static_cast<const T*>(x.data_ptr()), static_cast<const int64_t*>(target.data_ptr()),
      weight.defined() ? static_cast<const A*>(weight.data_ptr()) : nullptr, ignore_index, classes, inner);
  EMBER_CUDA_KERNEL_CHECK();
}

template <class T>
void backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& lse, const Tensor& x,
              const Tensor& target, int64_t ignore_index, int64_t positions, int64_t classes, int64_t inner) {
  using A = typename Acc<T>::type;
  const int index = x.device().index;
  DeviceGuard guard(index);
  auto run = [&](auto* g) {
    using G = std::remove_pointer_t<decltype(g)>;
    ce_backward_kernel<T, A, G><<<static_cast<unsigned>(positions), kLossThreads, 0, current_cuda_stream(index)>>>(
        static_cast<G*>(gx.data_ptr()), static_cast<const A*>(gl.data_ptr()), static_cast<const A*>(wt.data_ptr()),
        static_cast<const A*>(lse.data_ptr()), static_cast<const T*>(x.data_ptr()),
        static_cast<const int64_t*>(target.data_ptr()), ignore_index, classes, inner);
    EMBER_CUDA_KERNEL_CHECK();
  };
  if (gx.dtype() == x.dtype()) return run(static_cast<T*>(nullptr));  // float16/bfloat16 gradients directly
  run(static_cast<A*>(nullptr));
}

unsigned grid_for(int64_t total) {
  const int64_t b = (total + kLossThreads - 1) / kLossThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? b : 65535 * 8);
}

int64_t checked_positions(int64_t outer, int64_t inner) {
  const int64_t positions = outer * inner;
  EMBER_CHECK(positions <= 0x7fffffff, Error, "cross_entropy: ", positions, " positions exceed the CUDA grid limit");
  return positions;
}

}  // namespace

void nll_forward(Tensor& loss, Tensor& wt, const Tensor& x, const Tensor& target, const Tensor& weight,
                 int64_t ignore_index, int64_t outer, int64_t classes, int64_t inner) {
  const int64_t n = outer * inner;
  if (n == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    using A = typename Acc<T>::type;
    nll_forward_kernel<T, A><<<grid_for(n), kLossThreads, 0, current_cuda_stream(index)>>>(
        static_cast<A*>(loss.data_ptr()), static_cast<A*>(wt.data_ptr()), static_cast<const T*>(x.data_ptr()),
        static_cast<const int64_t*>(target.data_ptr()),
        weight.defined() ? static_cast<const A*>(weight.data_ptr()) : nullptr, ignore_index, classes, inner, n);
    EMBER_CUDA_KERNEL_CHECK();
  };
  switch (x.dtype()) {
    case DType::Float32: return run(float{});
    case DType::Float64: return run(double{});
    case DType::Float16: return run(__half{});
    case DType::BFloat16: return run(__nv_bfloat16{});
    default: throw NotImplementedError(str("nll_loss: not implemented for ", dtype_name(x.dtype()), " on CUDA"));
  }
}

void nll_backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& target, int64_t ignore_index,
                  int64_t outer, int64_t classes, int64_t inner) {
  const int index = gx.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  EMBER_CUDA_CHECK(cudaMemsetAsync(gx.data_ptr(), 0, gx.numel() * itemsize(gx.dtype()), stream));
  const int64_t n = outer * inner;
  if (n == 0) return;
  auto run = [&](auto tag) {
    using A = decltype(tag);
    nll_backward_kernel<A><<<grid_for(n), kLossThreads, 0, stream>>>(
        static_cast<A*>(gx.data_ptr()), static_cast<const A*>(gl.data_ptr()), static_cast<const A*>(wt.data_ptr()),
        static_cast<const int64_t*>(target.data_ptr()), ignore_index, classes, inner, n);
    EMBER_CUDA_KERNEL_CHECK();
  };
  if (gx.dtype() == DType::Float64) return run(double{});
  run(float{});
}

void cross_entropy_forward(Tensor& loss, Tensor& wt, Tensor& lse, const Tensor& x, const Tensor& target,
                           const Tensor& weight, int64_t ignore_index, int64_t outer, int64_t classes, int64_t inner) {
  const int64_t n = checked_positions(outer, inner);
  if (n == 0) return;
  dispatch_device_float(x.dtype(), "cross_entropy", [&](auto tag) {
    forward<decltype(tag)>(loss, wt, lse, x, target, weight, ignore_index, n, classes, inner);
  });
}

void cross_entropy_backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& lse, const Tensor& x,
                            const Tensor& target, int64_t ignore_index, int64_t outer, int64_t classes,
                            int64_t inner) {
  const int64_t n = checked_positions(outer, inner);
  if (n == 0) return;
  dispatch_device_float(x.dtype(), "cross_entropy", [&](auto tag) {
    backward<decltype(tag)>(gx, gl, wt, lse, x, target, ignore_index, n, classes, inner);
  });
}

}  // namespace ember::cuda
