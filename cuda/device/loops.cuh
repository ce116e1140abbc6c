// The CUDA elementwise launcher: runs a __device__ functor over a
// TensorIterator's operands (operand 0 is the output) on the current stream of
// the output's device. Contiguous operands take a vectorized path (4 elements
// per thread with 4-wide loads when every pointer is aligned); other layouts
// turn each linear index into byte offsets from the iterator's coalesced
// shape and strides, with 32-bit index math when the sizes allow it.
// Functors are extended lambdas (`[=] __device__ (float x) { ... }`), defined
// in named template functions (nvcc refuses them inside generic lambdas).
// The kernels are in cuda/device/loops_kernels.cuh; this file launches them.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include <cuda_runtime_api.h>

#include <ember/core/error.h>
#include <ember/core/tensor_iterator.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/loops_kernels.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace detail {

inline int blocks_for(int64_t work) {
  const int64_t b = (work + kThreads - 1) / kThreads;
  // Grid-stride loops cover the rest; this many blocks fill any current GPU.
  return static_cast<int>(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

template <class O>
void launch_contiguous(const TensorIterator& iter, int64_t n, const O& op, const int64_t* sizes,
                       const Scalars<O::NT>& s, cudaStream_t stream) {
  const bool aligned = vector_aligned<O::NT>(iter, sizes, s);
  Pointers<O::NT> p;
  for (int t = 0; t < O::NT; ++t) p.data[t] = iter.data(t);
  contiguous_kernel<O><<<blocks_for((n + kVec - 1) / kVec), kThreads, 0, stream>>>(p, n, aligned, op, s);
}

}  // namespace detail

// out = f(in...) elementwise. Operand 0 of `iter` has type R (on a CUDA
// device), operand i+1 type A_i (on the same device).
template <class R, class... A, class F>
void launch(const TensorIterator& iter, F f) {
  constexpr int NT = 1 + sizeof...(A);
  const int64_t n = iter.numel();
  if (n == 0) return;
  EMBER_CHECK(iter.ndim() <= kMaxDims, Error, "cuda elementwise: at most ", kMaxDims, " dimensions are supported, got ",
              iter.ndim());
  cudaStream_t stream = current_cuda_stream();
  const detail::Op<R, F, A...> op{f};
  constexpr int64_t sizes[NT] = {static_cast<int64_t>(sizeof(R)), static_cast<int64_t>(sizeof(A))...};
  EMBER_CHECK(!iter.on_cpu(0), Error, "cuda elementwise: the output is a CPU tensor");
  bool host[NT];
  for (int t = 0; t < NT; ++t) host[t] = iter.on_cpu(t);
  const Scalars<NT> scalars = detail::scalar_inputs<NT>(iter, sizes, host);
  if (detail::contiguous_layout<NT>(iter, sizes, scalars)) {
    detail::launch_contiguous(iter, n, op, sizes, scalars, stream);
    EMBER_CUDA_KERNEL_CHECK();
    return;
  }
  Geometry<NT> g;
  g.ndim = iter.ndim();
  int64_t max_offset = 0;
  for (int d = 0; d < g.ndim; ++d) g.shape[d] = iter.shape()[d];
  for (int t = 0; t < NT; ++t) {
    g.data[t] = iter.data(t);
    int64_t extent = 0;
    for (int d = 0; d < g.ndim; ++d) {
      g.strides[t][d] = iter.stride(t, d);
      const int64_t s = iter.stride(t, d) < 0 ? -iter.stride(t, d) : iter.stride(t, d);
      extent += s * (g.shape[d] - 1);
    }
    max_offset = extent > max_offset ? extent : max_offset;
  }
  bool negative = false;
  for (int t = 0; t < NT; ++t)
    for (int d = 0; d < g.ndim; ++d) negative = negative || iter.stride(t, d) < 0;
  // Below 2^31, a 32-bit index plus the grid stride (at most 2^24) cannot wrap.
  const bool small = !negative && n <= std::numeric_limits<int32_t>::max() &&
                     max_offset <= std::numeric_limits<int32_t>::max();
  if (small) {
    detail::strided_kernel<uint32_t>
        <<<detail::blocks_for(n), kThreads, 0, stream>>>(g, static_cast<uint32_t>(n), op, scalars);
  } else {
    detail::strided_kernel<int64_t><<<detail::blocks_for(n), kThreads, 0, stream>>>(g, n, op, scalars);
  }
  EMBER_CUDA_KERNEL_CHECK();
}

}  // namespace ember::cuda
