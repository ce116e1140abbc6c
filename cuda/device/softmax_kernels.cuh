// The fused softmax / log_softmax kernel (cuda/softmax.cu launches it): one
// block of kSoftmaxThreads threads per column (o, i) of a contiguous
// [outer, n, inner] block finds the column's max, sums exp(x - max) and
// writes the result, reading the input three times and writing once. Device
// code only, in a header so that tests/cpp/test_row_kernels_emulation.cpp
// runs the same source on the CPU (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>
#include <limits>

#include <ember/cuda/device/block_reduce.cuh>
#include <ember/cuda/device/math.cuh>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

constexpr int kSoftmaxThreads = 256;

// Grid-strides over the columns; blockDim.x == kSoftmaxThreads.
template <class T, bool Log>
__global__ void softmax_kernel(const T* x, T* out, int64_t columns, int64_t n, int64_t inner) {
  __shared__ T shared[kSoftmaxThreads / kWarpSize];
  for (int64_t c = blockIdx.x; c < columns; c += gridDim.x) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    const T* p = x + base;
    T* q = out + base;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t r = threadIdx.x; r < n; r += blockDim.x) {
      const T v = p[r * inner];
      m = (v != v || m != m) ? v + m : (v > m ? v : m);
    }
    m = block_reduce(m, NanMaxOp{}, shared);
    T s = 0;
    for (int64_t r = threadIdx.x; r < n; r += blockDim.x) s += dmath::exp(p[r * inner] - m);
    s = block_sum(s, shared);
    if (Log) {
      const T shift = m + dmath::log(s);
      for (int64_t r = threadIdx.x; r < n; r += blockDim.x) q[r * inner] = p[r * inner] - shift;
    } else {
      const T inv = T(1) / s;
      for (int64_t r = threadIdx.x; r < n; r += blockDim.x) q[r * inner] = dmath::exp(p[r * inner] - m) * inv;
    }
  }
}

}  // namespace
}  // namespace ember::cuda
