// The index family's gather / scatter kernel (cuda/index.cu launches it): one
// thread per element of the iteration shape, in a grid-stride loop; the
// operands' offsets come from cuda/index_layout.h, and an op moves the
// element (gather, scatter) or adds it atomically (accumulate). Device code
// only, in a header so that tests/cpp/test_index_emulation.cpp runs the same
// source on the CPU (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <ember/cuda/index_layout.h>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

template <int N, class Index, class Op>
__global__ void index_kernel(IndexGeometry<N> g, int64_t n, Op op) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t plain, indexed;
    index_offsets<N, Index>(g, i, plain, indexed);
    op(plain, indexed);
  }
}

template <class U>
struct GatherOp {
  U* out;
  const U* src;
  __device__ void operator()(int64_t plain, int64_t indexed) const { out[plain] = src[indexed]; }
};

template <class U>
struct ScatterOp {
  U* dst;
  const U* values;
  __device__ void operator()(int64_t plain, int64_t indexed) const { dst[indexed] = values[plain]; }
};

__device__ inline void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ inline void atomic_add(double* p, double v) { atomicAdd(p, v); }
// Native 16-bit atomics: sm_70 (half) and sm_80 (bfloat16), below every
// architecture ember builds for.
__device__ inline void atomic_add(__half* p, __half v) { atomicAdd(p, v); }
__device__ inline void atomic_add(__nv_bfloat16* p, __nv_bfloat16 v) { atomicAdd(p, v); }
__device__ inline void atomic_add(int32_t* p, int32_t v) { atomicAdd(p, v); }
// Two's complement: an unsigned add is the signed add.
__device__ inline void atomic_add(int64_t* p, int64_t v) {
  static_assert(sizeof(int64_t) == sizeof(unsigned long long), "int64_t must be 64-bit");
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
// bool accumulates as a logical or (as on the CPU): only true is ever
// written, so racing writers agree.
__device__ inline void atomic_add(bool* p, bool v) {
  if (v) *p = true;
}

template <class T>
struct AddOp {
  T* dst;
  const T* values;
  __device__ void operator()(int64_t plain, int64_t indexed) const { atomic_add(dst + indexed, values[plain]); }
};

}  // namespace
}  // namespace ember::cuda
