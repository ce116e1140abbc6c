// ember dtypes as device element types (CUDA's __half / __nv_bfloat16 for the
// half types, whose host classes have no device code), and conversions
// between them through float (round to nearest even, as on the CPU).
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <ember/core/dtype.h>
#include <ember/core/error.h>

namespace ember::cuda {

// Calls f(TypeTag<T>{}) with T the device element type of `t`.
template <class F>
void dispatch_device(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(TypeTag<bool>{});
    case DType::UInt8: return f(TypeTag<uint8_t>{});
    case DType::Int8: return f(TypeTag<int8_t>{});
    case DType::Int32: return f(TypeTag<int32_t>{});
    case DType::Int64: return f(TypeTag<int64_t>{});
    case DType::Float16: return f(TypeTag<__half>{});
    case DType::BFloat16: return f(TypeTag<__nv_bfloat16>{});
    case DType::Float32: return f(TypeTag<float>{});
    case DType::Float64: return f(TypeTag<double>{});
    default: break;
  }
  throw_unsupported_dtype(t, "cuda", "");
}

// Calls f(T{}) with T the device type of a floating dtype; other dtypes raise
// NotImplementedError naming `op`.
template <class F>
void dispatch_device_float(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(__half{});
    case DType::BFloat16: return f(__nv_bfloat16{});
    default: throw NotImplementedError(str(op, ": not implemented for ", dtype_name(d), " on CUDA"));
  }
}

// Runs `call` with T the C++ type of `dtype` (a math dtype: no half types).
#define EMBER_CUDA_DISPATCH_MATH(dtype, name, call) \
  dispatch_math(dtype, name, [&](auto tag) {        \
    using T = typename decltype(tag)::type;         \
    call;                                           \
  })

// The unsigned integer type of an element size (1, 2, 4 or 8 bytes), for
// kernels that only move elements.
template <size_t N> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };

// Any element type -> float or double (half types widen exactly to float).
template <class S>
__device__ inline auto widen(S s) {
  if constexpr (std::is_same_v<S, __half>) return __half2float(s);
  else if constexpr (std::is_same_v<S, __nv_bfloat16>) return __bfloat162float(s);
  else return s;
}

template <class D, class S>
__device__ inline D convert(S s) {
  const auto w = widen(s);
  if constexpr (std::is_same_v<D, bool>) {
    return w != decltype(w)(0);
  } else if constexpr (std::is_same_v<D, __half>) {
    // Through float, also from double, as the CPU casts (core/cpu/copy.cpp):
    // the two roundings can differ from one direct rounding, and CUDA must
    // give the CPU's bits (tests/cpp/test_cast_emulation.cpp checks it).
    return __float2half_rn(static_cast<float>(w));
  } else if constexpr (std::is_same_v<D, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(w));
  } else if constexpr ((std::is_same_v<D, uint8_t> || std::is_same_v<D, int8_t>) &&
                       std::is_floating_point_v<decltype(w)>) {
    // Through int64, as PyTorch does: nvcc turns a plain cast into PTX's
    // cvt.rzi.u32 / .s32, which saturates, so -1.0 would become 0 (and 200.0
    // int8 127) on the GPU where the CPU (and PyTorch on both devices) wraps
    // to 255 (-56).
    return static_cast<D>(static_cast<int64_t>(w));
  } else {
    return static_cast<D>(w);
  }
}

}  // namespace ember::cuda
