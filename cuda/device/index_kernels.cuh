// The index family's gather / scatter kernel (cuda/index.cu launches it): one
// thread per element of the iteration shape, in a grid-stride loop; the
// operands' offsets come from cuda/index_layout.h, and an op moves the
// element (gather, scatter) or adds it atomically (accumulate). And tril /
// triu's kernel. Device code (and the host geometry it takes), in a header so
// that tests/cpp/test_index_emulation.cpp and test_tril_triu_emulation.cpp run
// the same source on the CPU (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <ember/core/shape.h>
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
// 8-bit integers have no native atomic add: a compare-and-swap loop on the
// aligned 32-bit word that holds the byte rewrites the other three bytes
// unchanged. The word stays inside the allocation: blocks start 512-byte
// aligned and are sized in multiples of 512. The sum wraps, as on the CPU.
template <class B>
__device__ inline void atomic_add_byte(B* p, B v) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
  const unsigned int shift = static_cast<unsigned int>(addr & 3u) * 8u;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const unsigned int sum = ((assumed >> shift) + static_cast<uint8_t>(v)) & 0xFFu;
    old = atomicCAS(word, assumed, (assumed & ~(0xFFu << shift)) | (sum << shift));
  } while (old != assumed);
}
__device__ inline void atomic_add(int8_t* p, int8_t v) { atomic_add_byte(p, v); }
__device__ inline void atomic_add(uint8_t* p, uint8_t v) { atomic_add_byte(p, v); }
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

// ---- tril / triu: out (contiguous) = x's [..., rows, cols] matrices with the
// elements above (tril) or below (triu) `diagonal` zeroed.

constexpr int kTriMaxBatchDims = 16;

// x's layout: batch dims, then the matrix dims (strides in elements).
struct TriGeometry {
  int nbatch;
  int64_t batch_shape[kTriMaxBatchDims];
  int64_t batch_strides[kTriMaxBatchDims];
  int64_t rows, cols, row_stride, col_stride;
};

// x's shape and strides, 2 to kTriMaxBatchDims + 2 dims (the caller checks).
inline TriGeometry tri_geometry(const Shape& shape, const Strides& strides) {
  const int nd = static_cast<int>(shape.size());
  TriGeometry g{};
  g.nbatch = nd - 2;
  for (int d = 0; d < g.nbatch; ++d) {
    g.batch_shape[d] = shape[d];
    g.batch_strides[d] = strides[d];
  }
  g.rows = shape[nd - 2];
  g.cols = shape[nd - 1];
  g.row_stride = strides[nd - 2];
  g.col_stride = strides[nd - 1];
  return g;
}

// One thread per output element i (n = out's numel > 0), in a grid-stride loop.
template <class U>
__global__ void tril_triu_kernel(U* out, const U* x, TriGeometry g, int64_t n, int64_t diagonal, bool lower) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = i % g.cols;
    const int64_t r = (i / g.cols) % g.rows;
    int64_t batch = i / (g.cols * g.rows);
    int64_t off = r * g.row_stride + j * g.col_stride;
    for (int d = g.nbatch - 1; d >= 0; --d) {
      off += (batch % g.batch_shape[d]) * g.batch_strides[d];
      batch /= g.batch_shape[d];
    }
    const bool keep = lower ? j - r <= diagonal : j - r >= diagonal;
    out[i] = keep ? x[off] : U{};  // all-zero bits are 0 in every dtype
  }
}

}  // namespace
}  // namespace ember::cuda
