// The device half of the CUDA elementwise launcher (cuda/device/loops.cuh
// launches these kernels): the iterator's geometry, the functor wrapper and
// the two kernels, contiguous (kVec elements per thread, vector loads and
// stores when aligned) and strided (byte offsets from a linear index, in a
// 32- or 64-bit index type), and the launch's host-side choices (single-value
// inputs, which kernel, vector alignment). In a header of its own, without
// CUDA runtime calls, so that tests/cpp/test_loops_emulation.cpp runs the
// same source on the CPU (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>
#include <cstring>
#include <utility>

#include <ember/core/error.h>
#include <ember/core/tensor_iterator.h>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda/std/tuple>
#endif

namespace ember::cuda {

constexpr int kMaxDims = 16;
constexpr int kThreads = 256;
constexpr int kVec = 4;  // elements per thread on the contiguous path

// The iterator's geometry, passed to kernels by value.
template <int NT>
struct Geometry {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t strides[NT][kMaxDims];  // bytes
  char* data[NT];
};

// Inputs that hold one value for the whole op (bit t set in `mask` for
// operand t): a device operand whose strides are all 0, read through its
// pointer, or a CPU number (also in `inline_mask`) whose bits travel in the
// launch's arguments in `bits[t]`, so `x + 1.0` needs no fill kernel and keeps
// the contiguous vector path.
template <int NT>
struct Scalars {
  uint32_t mask = 0;
  uint32_t inline_mask = 0;
  uint64_t bits[NT] = {};
};

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

namespace detail {

// The op's element types and functor; __global__ templates may not take
// several packs, so the kernels are templated on this one type.
template <class R, class F, class... A>
struct Op {
  static constexpr int NT = 1 + sizeof...(A);
  F f;

  // Input I's single value (it has its bit in s.mask).
  template <class T, size_t I>
  __device__ static T scalar_input(char* const* data, const Scalars<NT>& s) {
    if ((s.inline_mask >> (I + 1)) & 1u) {
      T v;
      memcpy(&v, &s.bits[I + 1], sizeof(T));
      return v;
    }
    return *reinterpret_cast<const T*>(data[I + 1]);
  }
  template <class T, size_t I>
  __device__ static T input_at(char* const* data, int64_t i, const Scalars<NT>& s) {
    if ((s.mask >> (I + 1)) & 1u) return scalar_input<T, I>(data, s);
    return reinterpret_cast<const T*>(data[I + 1])[i];
  }
  template <class T, size_t I>
  __device__ static Vec<T, kVec> input_vec(char* const* data, int64_t base, const Scalars<NT>& s) {
    if ((s.mask >> (I + 1)) & 1u) {
      const T x = scalar_input<T, I>(data, s);
      Vec<T, kVec> v;
#pragma unroll
      for (int k = 0; k < kVec; ++k) v.v[k] = x;
      return v;
    }
    return *reinterpret_cast<const Vec<T, kVec>*>(reinterpret_cast<const T*>(data[I + 1]) + base);
  }

  template <class Index, size_t... I>
  __device__ void strided(char* const* data, const Index* off, const Scalars<NT>& s, std::index_sequence<I...>) const {
    *reinterpret_cast<R*>(data[0] + off[0]) =
        f(((s.inline_mask >> (I + 1)) & 1u ? scalar_input<A, I>(data, s)
                                            : *reinterpret_cast<const A*>(data[I + 1] + off[I + 1]))...);
  }
  template <size_t... I>
  __device__ void one(char* const* data, int64_t i, const Scalars<NT>& s, std::index_sequence<I...>) const {
    reinterpret_cast<R*>(data[0])[i] = f(input_at<A, I>(data, i, s)...);
  }
  template <size_t... I>
  __device__ void vec(char* const* data, int64_t base, const Scalars<NT>& s, std::index_sequence<I...>) const {
    const ::cuda::std::tuple<Vec<A, kVec>...> v{input_vec<A, I>(data, base, s)...};
    Vec<R, kVec> r;
#pragma unroll
    for (int k = 0; k < kVec; ++k) r.v[k] = f(::cuda::std::get<I>(v).v[k]...);
    *reinterpret_cast<Vec<R, kVec>*>(reinterpret_cast<R*>(data[0]) + base) = r;
  }
  using Inputs = std::make_index_sequence<sizeof...(A)>;
};

template <int NT>
struct Pointers {
  char* data[NT];
};

// Byte offsets of every operand at linear index i (dims innermost last).
template <int NT, class Index>
__device__ inline void offsets_of(const Geometry<NT>& g, Index i, Index* off) {
#pragma unroll
  for (int t = 0; t < NT; ++t) off[t] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const Index size = static_cast<Index>(g.shape[d]);
    const Index idx = i % size;
    i /= size;
#pragma unroll
    for (int t = 0; t < NT; ++t) off[t] += idx * static_cast<Index>(g.strides[t][d]);
  }
}

template <class Index, class O>
__global__ void strided_kernel(Geometry<O::NT> g, Index n, O op, Scalars<O::NT> s) {
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    Index off[O::NT];
    offsets_of<O::NT, Index>(g, i, off);
    op.strided(g.data, off, s, typename O::Inputs{});
  }
}

// Contiguous operands (or scalars, per `s`), n elements; vector loads and
// stores when `aligned`.
template <class O>
__global__ void contiguous_kernel(Pointers<O::NT> p, int64_t n, bool aligned, O op, Scalars<O::NT> s) {
  const int64_t first = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kVec;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * kVec;
  for (int64_t base = first; base < n; base += step) {
    if (aligned && base + kVec <= n) {
      op.vec(p.data, base, s, typename O::Inputs{});
    } else {
      for (int64_t i = base; i < n && i < base + kVec; ++i) op.one(p.data, i, s, typename O::Inputs{});
    }
  }
}

// ---- the launch's host-side choices (cuda/device/loops.cuh makes them;
// tests/cpp/test_loops_emulation.cpp checks them on CPU tensors).

// Which inputs are one value for the whole op (see Scalars). host[t]: operand
// t is a CPU tensor, whose bits are copied into the launch arguments; only
// numbers (0-d CPU tensors, per common_device) may be. sizes: the kernel's
// element sizes.
template <int NT>
Scalars<NT> scalar_inputs(const TensorIterator& iter, const int64_t* sizes, const bool* host) {
  Scalars<NT> s;
  for (int t = 1; t < NT; ++t) {
    bool broadcast = true;
    for (int d = 0; d < iter.ndim(); ++d) broadcast = broadcast && iter.stride(t, d) == 0;
    if (host[t]) {
      EMBER_CHECK(broadcast && sizes[t] <= static_cast<int64_t>(sizeof(uint64_t)), Error,
                  "cuda elementwise: a CPU operand that is not a single number reached a CUDA kernel");
      // Its bytes are read as the kernel's element type: the caller casts first.
      EMBER_CHECK(iter.element_size(t) == sizes[t], Error, "cuda elementwise: a CPU number of ",
                  iter.element_size(t), " bytes reached a kernel reading ", sizes[t], "-byte elements (internal error)");
      std::memcpy(&s.bits[t], iter.data(t), static_cast<size_t>(sizes[t]));
      s.inline_mask |= 1u << t;
    }
    if (broadcast) s.mask |= 1u << t;
  }
  return s;
}

// Whether the contiguous kernel fits: one (coalesced) dim in which every
// operand is dense, or a single value.
template <int NT>
bool contiguous_layout(const TensorIterator& iter, const int64_t* sizes, const Scalars<NT>& s) {
  if (iter.ndim() == 0 || (iter.ndim() == 1 && iter.shape()[0] == 1)) return true;
  if (iter.ndim() != 1) return false;
  for (int t = 0; t < NT; ++t) {
    if (iter.stride(t, 0) != sizes[t] && !((s.mask >> t) & 1u)) return false;
  }
  return true;
}

// Whether the contiguous kernel may use kVec-wide vector loads and stores:
// every dense operand aligned to kVec elements (single values are read one
// at a time).
template <int NT>
bool vector_aligned(const TensorIterator& iter, const int64_t* sizes, const Scalars<NT>& s) {
  for (int t = 0; t < NT; ++t) {
    if ((s.mask >> t) & 1u) continue;
    if (reinterpret_cast<uintptr_t>(iter.data(t)) % static_cast<uintptr_t>(sizes[t] * kVec) != 0) return false;
  }
  return true;
}

}  // namespace detail

}  // namespace ember::cuda
