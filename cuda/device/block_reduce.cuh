// Warp- and block-wide reductions shared by the kernels that reduce inside a
// thread block (cuda/reduce.cu, norm.cu, loss.cu, softmax.cu).
//
// - warp_reduce(v, op): a shuffle-down tree over the 32 lanes of a warp; lane
//   0 ends with op over the warp's values.
// - block_reduce(v, op, shared): each warp reduces, lane 0 of each warp puts
//   its partial in shared[warp], and every thread then folds the partials in
//   warp order, so every thread gets the same result. A trailing
//   __syncthreads lets the caller reuse `shared` right away.
//
// Requirements: blockDim.x is a multiple of 32 and at most 1024 (every thread
// of the block calls in, with its identity value if it has nothing); `shared`
// holds kMaxWarps values. op must be associative; the order of combination is
// fixed, so results are deterministic run to run.
//
// Values are moved between lanes with shfl_down(v, offset): arithmetic types
// and bool are handled here; a kernel reducing its own struct declares a
// shfl_down overload for it next to the struct (found by argument-dependent
// lookup).
#pragma once
#include <type_traits>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda_runtime.h>
#endif

namespace ember::cuda {

constexpr int kWarpSize = 32;
constexpr int kMaxWarps = 1024 / kWarpSize;

struct SumOp {
  template <class T>
  __device__ T operator()(T a, T b) const { return a + b; }
};

// Max where a NaN loses against any number, on either side (callers that
// must propagate NaN pass their own op); all NaN gives NaN.
struct MaxOp {
  template <class T>
  __device__ T operator()(T a, T b) const { return (a != a || b > a) ? b : a; }
};

// Max that propagates NaN: a NaN on either side makes the result NaN.
struct NanMaxOp {
  template <class T>
  __device__ T operator()(T a, T b) const { return a != a || b != b ? a + b : (a > b ? a : b); }
};

template <class T>
__device__ __forceinline__ T shfl_down(T v, int offset) {
  if constexpr (std::is_same_v<T, bool>) {
    return __shfl_down_sync(0xffffffffu, static_cast<int>(v), offset) != 0;
  } else {
    return __shfl_down_sync(0xffffffffu, v, offset);
  }
}

template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) v = op(v, shfl_down(v, offset));
  return v;
}

template <class T>
__device__ __forceinline__ T warp_sum(T v) { return warp_reduce(v, SumOp{}); }

template <class T>
__device__ __forceinline__ T warp_max(T v) { return warp_reduce(v, MaxOp{}); }

template <class T, class Op>
__device__ T block_reduce(T v, Op op, T* shared) {
  v = warp_reduce(v, op);
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / kWarpSize;
  T total = shared[0];
  for (int i = 1; i < warps; ++i) total = op(total, shared[i]);
  __syncthreads();
  return total;
}

template <class T>
__device__ T block_sum(T v, T* shared) { return block_reduce(v, SumOp{}, shared); }

template <class T>
__device__ T block_max(T v, T* shared) { return block_reduce(v, MaxOp{}, shared); }

}  // namespace ember::cuda
