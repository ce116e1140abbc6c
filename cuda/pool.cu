// Pooling on the GPU: one thread per output cell walks its window (fixed or
// adaptive, as core/cpu/pool.cpp defines them). The backward passes add into
// the input gradient with atomics, since windows may overlap. The kernels are
// in cuda/device/pool_kernels.cuh; this file launches them.
#include <ember/cuda/pool.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/pool_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

unsigned blocks_for(int64_t total) {
  const int64_t b = (total + kPoolThreads - 1) / kPoolThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? b : 65535 * 8);
}

void zero(Tensor& t, int index) {
  EMBER_CUDA_CHECK(cudaMemsetAsync(t.data_ptr(), 0, t.numel() * itemsize(t.dtype()), current_cuda_stream(index)));
}

}  // namespace

void max_pool2d(Tensor& out, Tensor& indices, const Tensor& x, const cpu::PoolGeom& g) {
  const int64_t total = out.numel();
  if (total == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  dispatch_device_float(x.dtype(), "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    max_pool_kernel<T><<<blocks_for(total), kPoolThreads, 0, current_cuda_stream(index)>>>(
        static_cast<T*>(out.data_ptr()), static_cast<int64_t*>(indices.data_ptr()),
        static_cast<const T*>(x.data_ptr()), g, total);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void max_pool2d_backward(Tensor& gx, const Tensor& gy, const Tensor& indices, int64_t planes, int64_t plane_in,
                         int64_t plane_out) {
  const int index = gx.device().index;
  DeviceGuard guard(index);
  zero(gx, index);
  const int64_t total = planes * plane_out;
  if (total == 0) return;
  dispatch_device_float(gx.dtype(), "max_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    max_pool_backward_kernel<T><<<blocks_for(total), kPoolThreads, 0, current_cuda_stream(index)>>>(
        static_cast<T*>(gx.data_ptr()), static_cast<const T*>(gy.data_ptr()),
        static_cast<const int64_t*>(indices.data_ptr()), plane_in, plane_out, total);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void avg_pool2d(Tensor& out, const Tensor& x, const cpu::PoolGeom& g) {
  const int64_t total = out.numel();
  if (total == 0) return;
  const int index = x.device().index;
  DeviceGuard guard(index);
  dispatch_device_float(x.dtype(), "avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    avg_pool_kernel<T><<<blocks_for(total), kPoolThreads, 0, current_cuda_stream(index)>>>(
        static_cast<T*>(out.data_ptr()), static_cast<const T*>(x.data_ptr()), g, total);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void avg_pool2d_backward(Tensor& gx, const Tensor& gy, const cpu::PoolGeom& g) {
  const int index = gx.device().index;
  DeviceGuard guard(index);
  zero(gx, index);
  const int64_t total = gy.numel();
  if (total == 0) return;
  dispatch_device_float(gx.dtype(), "avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    avg_pool_backward_kernel<T><<<blocks_for(total), kPoolThreads, 0, current_cuda_stream(index)>>>(
        static_cast<T*>(gx.data_ptr()), static_cast<const T*>(gy.data_ptr()), g, total);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

}  // namespace ember::cuda
