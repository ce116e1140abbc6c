// Fused softmax / log_softmax: one block of threads per column (o, i) finds
// the column's max, sums exp(x - max) and writes the result, reading the
// input three times and writing once (no intermediate tensors). The kernel is
// in cuda/device/softmax_kernels.cuh; this file launches it.
#include <ember/cuda/softmax.h>

#include <cstdint>
#include <limits>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/softmax_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

template <class T>
void launch_softmax(Tensor& out, const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log) {
  const int64_t columns = outer * inner;
  const int grid = static_cast<int>(columns < 65535 ? columns : 65535);
  cudaStream_t stream = current_cuda_stream();
  if (log) softmax_kernel<T, true><<<grid, kSoftmaxThreads, 0, stream>>>(x.data<T>(), out.data<T>(), columns, n, inner);
  else softmax_kernel<T, false><<<grid, kSoftmaxThreads, 0, stream>>>(x.data<T>(), out.data<T>(), columns, n, inner);
  EMBER_CUDA_KERNEL_CHECK();
}

}  // namespace

void softmax(Tensor& out, const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log) {
  DeviceGuard guard(x.device().index);
  if (outer * inner == 0 || n == 0) return;
  if (x.dtype() == DType::Float32) return launch_softmax<float>(out, x, outer, n, inner, log);
  if (x.dtype() == DType::Float64) return launch_softmax<double>(out, x, outer, n, inner, log);
  throw TypeError(str(log ? "log_softmax" : "softmax", ": the CUDA kernel takes float32 or float64, got ",
                      dtype_name(x.dtype())));
}

}  // namespace ember::cuda
