// CUDA kernels of the binary family, run by the elementwise launcher
// (cuda/device/loops.cuh). Semantics follow core/cpu/binary.cpp: Python's
// sign rules for floor division and remainder, NaN-propagating
// maximum/minimum, bool + and * as or/and. Arithmetic also takes
// float16/bfloat16 tensors directly, computing in float. where and masked_fill only move
// values, so they run on every dtype as unsigned integers of its size.
#include <ember/cuda/binary.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/math.cuh>
#include <ember/cuda/unary.h>

namespace ember::cuda {

namespace {

template <class T>
__device__ inline T floor_div_float(T a, T b) {
  if (b == T(0)) return a / b;
  const T mod = dmath::fmod(a, b);
  T q = (a - mod) / b;
  if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) q -= T(1);
  if (q == T(0)) return dmath::copysign(T(0), a / b);
  T f = dmath::floor(q);
  if (q - f > T(0.5)) f += T(1);
  return f;
}

template <class T>
__device__ inline T remainder_float(T a, T b) {
  T m = dmath::fmod(a, b);
  if (m != T(0) && ((b < T(0)) != (m < T(0)))) m += b;
  return m;
}

template <class T>
__device__ inline T wrapping_neg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
}

template <class T>
__device__ inline bool is_negative(T v) {
  if constexpr (std::is_signed_v<T>) return v < T(0);
  else return false;
}

template <class T>
__device__ inline T div_trunc_int(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrapping_neg(a);
  }
  return static_cast<T>(a / b);
}

template <class T>
__device__ inline T div_floor_int(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrapping_neg(a);
  }
  T q = static_cast<T>(a / b);
  const T r = static_cast<T>(a % b);
  if (r != T(0) && is_negative(r) != is_negative(b)) q = static_cast<T>(q - 1);
  return q;
}

template <class T>
__device__ inline T remainder_int(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T(0);
  }
  T r = static_cast<T>(a % b);
  if (r != T(0) && is_negative(r) != is_negative(b)) r = static_cast<T>(r + b);
  return r;
}

template <class T>
__device__ inline T maximum_of(T a, T b) {
  if (dmath::is_nan(a)) return a;
  if (dmath::is_nan(b)) return b;
  return a > b ? a : b;
}

template <class T>
__device__ inline T minimum_of(T a, T b) {
  if (dmath::is_nan(a)) return a;
  if (dmath::is_nan(b)) return b;
  return a < b ? a : b;
}

// Half types are stored as S and computed in float: f takes and returns T.
template <class S, class F>
struct Widened2 {
  F f;
  __device__ S operator()(S a, S b) const { return convert<S>(f(widen(a), widen(b))); }
};

template <class S, class T, class F>
void launch2_as(const TensorIterator& it, F f) {
  if constexpr (std::is_same_v<S, T>) launch<T, T, T>(it, f);
  else launch<S, S, S>(it, Widened2<S, F>{f});
}

template <class T, class S = T>
void arithmetic(BinaryOp op, const TensorIterator& it, const Scalar& alpha) {
  switch (op) {
    case BinaryOp::Add: {
      const T s = alpha.to<T>();
      if (s == T(1)) return launch2_as<S, T>(it, [] __device__(T a, T b) { return static_cast<T>(a + b); });
      return launch2_as<S, T>(it, [s] __device__(T a, T b) { return static_cast<T>(a + s * b); });
    }
    case BinaryOp::Sub: {
      const T s = alpha.to<T>();
      if (s == T(1)) return launch2_as<S, T>(it, [] __device__(T a, T b) { return static_cast<T>(a - b); });
      return launch2_as<S, T>(it, [s] __device__(T a, T b) { return static_cast<T>(a - s * b); });
    }
    case BinaryOp::Mul: return launch2_as<S, T>(it, [] __device__(T a, T b) { return static_cast<T>(a * b); });
    case BinaryOp::Div:
      if constexpr (std::is_floating_point_v<T>) {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return static_cast<T>(a / b); });
      }
      break;
    case BinaryOp::DivTrunc:
      if constexpr (std::is_floating_point_v<T>) {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return dmath::trunc(a / b); });
      } else {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return div_trunc_int(a, b); });
      }
    case BinaryOp::DivFloor:
      if constexpr (std::is_floating_point_v<T>) {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return floor_div_float(a, b); });
      } else {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return div_floor_int(a, b); });
      }
    case BinaryOp::Remainder:
      if constexpr (std::is_floating_point_v<T>) {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return remainder_float(a, b); });
      } else {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return remainder_int(a, b); });
      }
    case BinaryOp::Maximum: return launch2_as<S, T>(it, [] __device__(T a, T b) { return maximum_of(a, b); });
    case BinaryOp::Minimum: return launch2_as<S, T>(it, [] __device__(T a, T b) { return minimum_of(a, b); });
    case BinaryOp::BitwiseAnd:
      if constexpr (std::is_integral_v<T>) {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return static_cast<T>(a & b); });
      }
      break;
    case BinaryOp::BitwiseOr:
      if constexpr (std::is_integral_v<T>) {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return static_cast<T>(a | b); });
      }
      break;
    case BinaryOp::BitwiseXor:
      if constexpr (std::is_integral_v<T>) {
        return launch2_as<S, T>(it, [] __device__(T a, T b) { return static_cast<T>(a ^ b); });
      }
      break;
    default: break;
  }
  throw Error("binary: unsupported op for this dtype");
}

void bool_arithmetic(BinaryOp op, const TensorIterator& it, const Scalar& alpha) {
  switch (op) {
    case BinaryOp::Add:
      if (!alpha.to_bool()) return launch<bool, bool, bool>(it, [] __device__(bool a, bool) { return a; });
      [[fallthrough]];
    case BinaryOp::Maximum:
    case BinaryOp::BitwiseOr: return launch<bool, bool, bool>(it, [] __device__(bool a, bool b) { return a || b; });
    case BinaryOp::Mul:
    case BinaryOp::Minimum:
    case BinaryOp::BitwiseAnd: return launch<bool, bool, bool>(it, [] __device__(bool a, bool b) { return a && b; });
    case BinaryOp::BitwiseXor: return launch<bool, bool, bool>(it, [] __device__(bool a, bool b) { return a != b; });
    default: break;
  }
  throw TypeError("binary: this arithmetic op is not supported on bool tensors");
}

template <class T>
void compare(BinaryOp op, const TensorIterator& it) {
  switch (op) {
    case BinaryOp::Eq: return launch<bool, T, T>(it, [] __device__(T a, T b) { return a == b; });
    case BinaryOp::Ne: return launch<bool, T, T>(it, [] __device__(T a, T b) { return a != b; });
    case BinaryOp::Lt: return launch<bool, T, T>(it, [] __device__(T a, T b) { return a < b; });
    case BinaryOp::Le: return launch<bool, T, T>(it, [] __device__(T a, T b) { return a <= b; });
    case BinaryOp::Gt: return launch<bool, T, T>(it, [] __device__(T a, T b) { return a > b; });
    case BinaryOp::Ge: return launch<bool, T, T>(it, [] __device__(T a, T b) { return a >= b; });
    case BinaryOp::LogicalAnd:
      return launch<bool, T, T>(it, [] __device__(T a, T b) { return a != T(0) && b != T(0); });
    case BinaryOp::LogicalOr:
      return launch<bool, T, T>(it, [] __device__(T a, T b) { return a != T(0) || b != T(0); });
    case BinaryOp::LogicalXor:
      return launch<bool, T, T>(it, [] __device__(T a, T b) { return (a != T(0)) != (b != T(0)); });
    default: break;
  }
  throw Error("binary: not a comparison");
}

template <class T>
void binary_typed(BinaryOp op, const TensorIterator& it, const Scalar& alpha) {
  if (is_bool_result(op)) {
    compare<T>(op, it);
  } else if constexpr (std::is_same_v<T, bool>) {
    bool_arithmetic(op, it, alpha);
  } else {
    arithmetic<T>(op, it, alpha);
  }
}

template <class T>
void logical_not_typed(const TensorIterator& it) {
  launch<bool, T>(it, [] __device__(T v) { return v == T(0); });
}

template <class T>
void bitwise_not_typed(const TensorIterator& it) {
  if constexpr (std::is_same_v<T, bool>) {
    launch<bool, bool>(it, [] __device__(bool v) { return !v; });
  } else if constexpr (std::is_integral_v<T>) {
    launch<T, T>(it, [] __device__(T v) { return static_cast<T>(~v); });
  } else {
    throw TypeError("bitwise_not: only integral and bool tensors are supported");
  }
}

template <class T>
void lerp_typed(const TensorIterator& it) {
  if constexpr (std::is_floating_point_v<T>) {
    launch<T, T, T, T>(it, [] __device__(T s, T e, T w) {
      return dmath::fabs(w) < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
    });
  } else {
    throw TypeError("lerp: only floating point tensors are supported");
  }
}

template <class U>
void where_bits(const TensorIterator& it) {
  launch<U, bool, U, U>(it, [] __device__(bool c, U x, U y) { return c ? x : y; });
}

template <class U>
void masked_fill_bits(const TensorIterator& it, U v) {
  launch<U, U, bool>(it, [v] __device__(U x, bool m) { return m ? v : x; });
}

template <class T>
T scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(s.to_double()));
  else return s.to<T>();
}

}  // namespace

void binary(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(a, out), y = on_device_of(b, out);
  TensorIterator it({out, x, y});
  if (it.numel() == 0) return;
  if (!is_bool_result(op) && a.dtype() == DType::Float16) return arithmetic<float, __half>(op, it, alpha);
  if (!is_bool_result(op) && a.dtype() == DType::BFloat16) return arithmetic<float, __nv_bfloat16>(op, it, alpha);
  dispatch_math(a.dtype(), "binary", [&](auto tag) { binary_typed<typename decltype(tag)::type>(op, it, alpha); });
}

void logical_not(Tensor& out, const Tensor& a) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(a, out);
  TensorIterator it({out, x});
  if (it.numel() == 0) return;
  dispatch_math(a.dtype(), "logical_not", [&](auto tag) { logical_not_typed<typename decltype(tag)::type>(it); });
}

void bitwise_not(Tensor& out, const Tensor& a) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(a, out);
  TensorIterator it({out, x});
  if (it.numel() == 0) return;
  dispatch_math(a.dtype(), "bitwise_not", [&](auto tag) { bitwise_not_typed<typename decltype(tag)::type>(it); });
}

void where(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  DeviceGuard guard(out.device().index);
  const Tensor c = on_device_of(cond, out), x = on_device_of(a, out), y = on_device_of(b, out);
  TensorIterator it({out, c, x, y});
  if (it.numel() == 0) return;
  switch (itemsize(out.dtype())) {
    case 1: return where_bits<uint8_t>(it);
    case 2: return where_bits<uint16_t>(it);
    case 4: return where_bits<uint32_t>(it);
    default: return where_bits<uint64_t>(it);
  }
}

void lerp(Tensor& out, const Tensor& start, const Tensor& end, const Tensor& weight) {
  DeviceGuard guard(out.device().index);
  const Tensor s = on_device_of(start, out), e = on_device_of(end, out), w = on_device_of(weight, out);
  TensorIterator it({out, s, e, w});
  if (it.numel() == 0) return;
  dispatch_math(out.dtype(), "lerp", [&](auto tag) { lerp_typed<typename decltype(tag)::type>(it); });
}

void masked_fill(Tensor& out, const Tensor& self, const Tensor& mask, const Scalar& value) {
  DeviceGuard guard(out.device().index);
  const Tensor x = on_device_of(self, out), m = on_device_of(mask, out);
  TensorIterator it({out, x, m});
  if (it.numel() == 0) return;
  dispatch(out.dtype(), "masked_fill", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using U = typename Bits<sizeof(T)>::type;
    const T v = scalar_as<T>(value);
    U bits;
    std::memcpy(&bits, &v, sizeof(T));
    masked_fill_bits<U>(it, bits);
  });
}

}  // namespace ember::cuda
