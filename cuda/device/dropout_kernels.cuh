// The fused dropout kernel (cuda/nn_misc.cu launches it): one thread per
// 128-bit Philox counter block draws the keep bits of its 4 elements, as
// core/cpu/nn_misc.h lays them out (element i takes word i of the stream,
// kept when w_i < threshold), and writes out = x * (keep ? scale : 0) in C
// (double for float64, float otherwise) and the bool mask. When every
// pointer is aligned, a thread's 4 elements move as one vector load/store
// (and its 4 mask bytes as one 32-bit store); the tail goes element by
// element. Device code only, in a header so that
// tests/cpp/test_dropout_emulation.cpp runs the same source on the CPU.
#pragma once
#include <cstdint>
#include <type_traits>

#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/random_kernels.cuh>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

constexpr int kDropoutVec = 4;  // elements per counter block (one 32-bit word each)

template <class T>
struct alignas(sizeof(T) * kDropoutVec) DropoutVec {
  T v[kDropoutVec];
};
struct alignas(4) DropoutMaskVec {
  bool v[kDropoutVec];
};

template <class T>
using DropoutCompute = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Whether the vector path may run: x, out and mask start on their vector size.
template <class T>
inline bool dropout_vector_aligned(const void* in, const void* out, const void* mask) {
  const auto on = [](const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; };
  return on(in, sizeof(DropoutVec<T>)) && on(out, sizeof(DropoutVec<T>)) && on(mask, sizeof(DropoutMaskVec));
}

template <class T>
__device__ inline T dropout_value(T x, bool keep, DropoutCompute<T> scale) {
  using C = DropoutCompute<T>;
  return convert<T>(static_cast<C>(widen(x)) * (keep ? scale : C(0)));
}

// out may alias in (the in-place dropout): each element is read before it is written.
template <class T>
__global__ void native_dropout_kernel(const T* in, T* out, bool* mask, int64_t n, uint64_t threshold,
                                      DropoutCompute<T> scale, uint64_t seed, uint64_t offset, bool vectorized) {
  const int64_t nblocks = (n + kDropoutVec - 1) / kDropoutVec;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < nblocks;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Words w = philox_block(seed, offset, static_cast<uint64_t>(j));
    const int64_t base = j * kDropoutVec;
    if (vectorized && base + kDropoutVec <= n) {
      const DropoutVec<T> x = *reinterpret_cast<const DropoutVec<T>*>(in + base);
      DropoutVec<T> y;
      DropoutMaskVec m;
#pragma unroll
      for (int q = 0; q < kDropoutVec; ++q) {
        m.v[q] = w.w[q] < threshold;
        y.v[q] = dropout_value(x.v[q], m.v[q], scale);
      }
      *reinterpret_cast<DropoutVec<T>*>(out + base) = y;
      *reinterpret_cast<DropoutMaskVec*>(mask + base) = m;
    } else {
      for (int q = 0; q < kDropoutVec; ++q) {
        const int64_t i = base + q;
        if (i >= n) break;
        const bool keep = w.w[q] < threshold;
        out[i] = dropout_value(in[i], keep, scale);
        mask[i] = keep;
      }
    }
  }
}

}  // namespace
}  // namespace ember::cuda
