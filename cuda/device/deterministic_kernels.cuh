// Index accumulation without atomics, for ember.use_deterministic_algorithms
// (cuda/index.cu): a first pass records each value's destination offset
// (RecordOffsetOp, run by the index kernel over the values in element order),
// a stable sort groups equal offsets, and run_sum_kernel gives each run of
// equal offsets to one thread, which adds the run's values into the
// destination in element order: dst + v1 + v2 + ..., the order the CPU's
// serial loop adds them in (so 32- and 64-bit types give the CPU's bits; the
// 16-bit floats add a run in float and round once). Device code only, in a header so that
// tests/cpp/test_deterministic_emulation.cpp runs it on the CPU.
#pragma once
#include <cstdint>
#include <type_traits>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

// The element number of a value is its plain offset: the values are contiguous.
struct RecordOffsetOp {
  int64_t* offsets;
  __device__ void operator()(int64_t plain, int64_t indexed) const { offsets[plain] = indexed; }
};

// How a run adds up: in the dtype itself (integers wrap around, as on the
// CPU), float for the 16-bit floats, and a logical or for bool (as the atomic
// path and the CPU do).
template <class T>
struct RunSum {
  using Acc = T;
  __device__ static Acc widen(T v) { return v; }
  __device__ static T narrow(Acc v) { return v; }
  __device__ static Acc add(Acc a, Acc b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  }
};
template <>
struct RunSum<__half> {
  using Acc = float;
  __device__ static Acc widen(__half v) { return __half2float(v); }
  __device__ static __half narrow(Acc v) { return __float2half(v); }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
};
template <>
struct RunSum<__nv_bfloat16> {
  using Acc = float;
  __device__ static Acc widen(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 narrow(Acc v) { return __float2bfloat16(v); }
  __device__ static Acc add(Acc a, Acc b) { return a + b; }
};
template <>
struct RunSum<bool> {
  using Acc = bool;
  __device__ static Acc widen(bool v) { return v; }
  __device__ static bool narrow(Acc v) { return v; }
  __device__ static Acc add(Acc a, Acc b) { return a || b; }
};

// keys: the n destination offsets sorted (stably); order[j]: the value that
// keys[j] came from. One thread per run start, in a grid-stride loop.
template <class T>
__global__ void run_sum_kernel(T* dst, const T* values, const int64_t* keys, const int64_t* order, int64_t n) {
  using R = RunSum<T>;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t key = keys[i];
    if (i > 0 && keys[i - 1] == key) continue;  // not the first of its run
    typename R::Acc acc = R::widen(dst[key]);
    for (int64_t j = i; j < n && keys[j] == key; ++j) acc = R::add(acc, R::widen(values[order[j]]));
    dst[key] = R::narrow(acc);
  }
}

}  // namespace
}  // namespace ember::cuda
