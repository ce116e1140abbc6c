// Fused softmax / log_softmax: one block of threads per column (o, i) finds
// the column's max, sums exp(x - max) and writes the result, reading the
// input three times and writing once (no intermediate tensors).
#include <ember/cuda/softmax.h>

#include <cstdint>
#include <limits>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/block_reduce.cuh>
#include <ember/cuda/device/math.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

constexpr int kBlock = 256;

// Max that propagates NaN: a NaN on either side makes the result NaN.
struct NanMaxOp {
  template <class T>
  __device__ T operator()(T a, T b) const { return a != a || b != b ? a + b : (a > b ? a : b); }
};

template <class T, bool Log>
__global__ void softmax_kernel(const T* x, T* out, int64_t columns, int64_t n, int64_t inner) {
  __shared__ T shared[kBlock / kWarpSize];
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

template <class T>
void launch_softmax(Tensor& out, const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log) {
  const int64_t columns = outer * inner;
  const int grid = static_cast<int>(columns < 65535 ? columns : 65535);
  cudaStream_t stream = current_cuda_stream();
  if (log) softmax_kernel<T, true><<<grid, kBlock, 0, stream>>>(x.data<T>(), out.data<T>(), columns, n, inner);
  else softmax_kernel<T, false><<<grid, kBlock, 0, stream>>>(x.data<T>(), out.data<T>(), columns, n, inner);
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
