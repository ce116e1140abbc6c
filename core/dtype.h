// Element types, PyTorch's promotion rules and the dtype dispatch helper.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/core/half.h>

namespace ember {

enum class DType : int8_t {
  Bool, UInt8, Int8, Int32, Int64, Float16, BFloat16, Float32, Float64, Complex64, Complex128,
};
constexpr int kNumDTypes = 11;

size_t itemsize(DType t);
const char* dtype_name(DType t);  // "float32", ...
inline bool is_floating(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
inline bool is_integral(DType t, bool include_bool = false) {
  return t == DType::UInt8 || t == DType::Int8 || t == DType::Int32 || t == DType::Int64 ||
         (include_bool && t == DType::Bool);
}
inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
inline bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
// The dtypes autograd differentiates: floating and complex.
inline bool is_differentiable(DType t) { return is_floating(t) || is_complex(t); }
// complex64 -> float32, complex128 -> float64; any other dtype is returned as is.
inline DType complex_part_dtype(DType t) {
  return t == DType::Complex64 ? DType::Float32 : t == DType::Complex128 ? DType::Float64 : t;
}
// The complex dtype whose parts are `t` (float64 -> complex128, float32 and the
// half types -> complex64); a complex dtype is returned as is.
DType complex_dtype_for(DType t);
// Raised by the dispatch helpers below for a dtype they have no case for.
[[noreturn]] void throw_unsupported_dtype(DType t, const char* op, const char* what);

// PyTorch's promote_types for two tensor dtypes.
DType promote_types(DType a, DType b);
// The float type integer inputs turn into for ops such as div, exp, mean.
DType default_float_dtype();
void set_default_float_dtype(DType t);
// Complex dtypes stay complex, so that an op without complex support reaches
// its dtype dispatch and says so instead of dropping the imaginary part.
inline DType to_float_dtype(DType t) { return is_floating(t) || is_complex(t) ? t : default_float_dtype(); }

template <class T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::Float16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };

template <class T> struct TypeTag { using type = T; };

// dispatch(dtype, "op", [&](auto tag) { using T = typename decltype(tag)::type; ... });
// Calls the lambda with the C++ type of `t`.
template <class F>
decltype(auto) dispatch(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Bool: return f(TypeTag<bool>{});
    case DType::UInt8: return f(TypeTag<uint8_t>{});
    case DType::Int8: return f(TypeTag<int8_t>{});
    case DType::Int32: return f(TypeTag<int32_t>{});
    case DType::Int64: return f(TypeTag<int64_t>{});
    case DType::Float16: return f(TypeTag<Half>{});
    case DType::BFloat16: return f(TypeTag<BFloat16>{});
    case DType::Float32: return f(TypeTag<float>{});
    case DType::Float64: return f(TypeTag<double>{});
    default: break;
  }
  throw_unsupported_dtype(t, op, "");
}

// Like dispatch, but only for the types CPU math runs in (no half types: the
// front-ends compute those in float32).
template <class F>
decltype(auto) dispatch_math(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Bool: return f(TypeTag<bool>{});
    case DType::UInt8: return f(TypeTag<uint8_t>{});
    case DType::Int8: return f(TypeTag<int8_t>{});
    case DType::Int32: return f(TypeTag<int32_t>{});
    case DType::Int64: return f(TypeTag<int64_t>{});
    case DType::Float32: return f(TypeTag<float>{});
    case DType::Float64: return f(TypeTag<double>{});
    default: break;
  }
  throw_unsupported_dtype(t, op, "no CPU kernel for dtype ");
}

// Like dispatch, for kernels written for float32 and float64 only (front-ends
// compute half types in float32 before calling them).
template <class F>
decltype(auto) dispatch_floating(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float32: return f(TypeTag<float>{});
    case DType::Float64: return f(TypeTag<double>{});
    default: break;
  }
  throw_unsupported_dtype(t, op, "CPU kernel expects float32 or float64, got ");
}

}  // namespace ember
