// The per-element formulas of the unary family's CUDA kernels, and which
// formula each op and element type gets (cuda/unary.cu launches them through
// cuda/device/loops.cuh). In a header without launch code so that
// tests/cpp/test_elementwise_emulation.cpp runs the same formulas on the CPU
// (tests/cpp/cuda_emulation.h) against ember's CPU kernels. Semantics follow
// core/cpu/unary.cpp: NaN handling, rounding half to even, integer pow; the
// half types are computed in float and rounded once (Widened).
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <ember/core/cpu/unary.h>
#include <ember/core/int_math.h>
#include <ember/core/scalar.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/math.cuh>

namespace ember::cuda {

namespace unary_ops {
namespace {  // one copy per including file (the .cu, or its emulation test)

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kSqrtHalf = 0.70710678118654752440;

// Elements stored as S (a half type) are computed in float by f and rounded once.
template <class S, class F>
struct Widened {
  F f;
  __device__ S operator()(S x) const { return convert<S>(f(widen(x))); }
};

// f, computing in T, as it runs on elements stored as S.
template <class S, class T, class F>
auto stored_as(F f) {
  if constexpr (std::is_same_v<S, T>) return f;
  else return Widened<S, F>{f};
}

// ---- ops of every math dtype
template <class T> struct Identity {
  __device__ T operator()(T x) const { return x; }
};
// Integer -, * (and +, - in binary_ops.cuh) wrap around on overflow as the
// CPU kernels do (core/int_math.h); for floats they are the plain operators.
template <class T> struct Neg {
  __device__ T operator()(T x) const { return int_math::wrapping_neg(x); }
};
template <class T> struct Abs {  // signed and floating T; fabs makes -0 +0, as numpy and PyTorch
  __device__ T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return dmath::fabs(x);
    else return x < T(0) ? Neg<T>{}(x) : x;
  }
};
template <class T> struct Sign {  // NaN gives 0, as in PyTorch
  __device__ T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) return x > T(0) ? T(1) : T(0);
    else return x > T(0) ? T(1) : x < T(0) ? static_cast<T>(-1) : T(0);
  }
};
template <class T> struct Square {
  __device__ T operator()(T x) const { return int_math::wrapping_mul(x, x); }
};
template <class T> struct Relu {
  __device__ T operator()(T x) const { return x > T(0) || dmath::is_nan(x) ? x : T(0); }
};

// ---- floating ops
template <class T> struct Floor { __device__ T operator()(T x) const { return dmath::floor(x); } };
template <class T> struct Ceil { __device__ T operator()(T x) const { return dmath::ceil(x); } };
template <class T> struct Round { __device__ T operator()(T x) const { return dmath::rint(x); } };  // half to even
template <class T> struct Exp { __device__ T operator()(T x) const { return dmath::exp(x); } };
template <class T> struct Log { __device__ T operator()(T x) const { return dmath::log(x); } };
template <class T> struct Log1p { __device__ T operator()(T x) const { return dmath::log1p(x); } };
template <class T> struct Expm1 { __device__ T operator()(T x) const { return dmath::expm1(x); } };
template <class T> struct Sqrt { __device__ T operator()(T x) const { return dmath::sqrt(x); } };
template <class T> struct Rsqrt { __device__ T operator()(T x) const { return T(1) / dmath::sqrt(x); } };
template <class T> struct Sin { __device__ T operator()(T x) const { return dmath::sin(x); } };
template <class T> struct Cos { __device__ T operator()(T x) const { return dmath::cos(x); } };
template <class T> struct Tanh { __device__ T operator()(T x) const { return dmath::tanh(x); } };
template <class T> struct Sigmoid {
  __device__ T operator()(T x) const { return T(1) / (T(1) + dmath::exp(-x)); }
};
template <class T> struct Reciprocal { __device__ T operator()(T x) const { return T(1) / x; } };
template <class T> struct Erf { __device__ T operator()(T x) const { return dmath::erf(x); } };
template <class T> struct GeluErf {
  __device__ T operator()(T x) const { return T(0.5) * x * (T(1) + dmath::erf(x * T(kSqrtHalf))); }
};
template <class T> struct GeluTanh {
  __device__ T operator()(T x) const {
    const T inner = T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x);
    return T(0.5) * x * (T(1) + dmath::tanh(inner));
  }
};
template <class T> struct Silu { __device__ T operator()(T x) const { return x / (T(1) + dmath::exp(-x)); } };

// Calls v(f) with f the formula of `op` for elements computed in T (float for
// the half types); false when T has none (the caller raises).
template <class T, class V>
bool visit_unary(UnaryOp op, V&& v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op != UnaryOp::Abs && op != UnaryOp::Sign) return false;
    v(Identity<bool>{});  // both map bool to itself
    return true;
  } else {
    switch (op) {
      case UnaryOp::Neg: v(Neg<T>{}); return true;
      case UnaryOp::Abs:
        if constexpr (std::is_unsigned_v<T>) v(Identity<T>{});
        else v(Abs<T>{});
        return true;
      case UnaryOp::Sign: v(Sign<T>{}); return true;
      case UnaryOp::Square: v(Square<T>{}); return true;
      case UnaryOp::Relu: v(Relu<T>{}); return true;
      default: break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      switch (op) {
        case UnaryOp::Floor: v(Floor<T>{}); return true;
        case UnaryOp::Ceil: v(Ceil<T>{}); return true;
        case UnaryOp::Round: v(Round<T>{}); return true;
        case UnaryOp::Exp: v(Exp<T>{}); return true;
        case UnaryOp::Log: v(Log<T>{}); return true;
        case UnaryOp::Log1p: v(Log1p<T>{}); return true;
        case UnaryOp::Expm1: v(Expm1<T>{}); return true;
        case UnaryOp::Sqrt: v(Sqrt<T>{}); return true;
        case UnaryOp::Rsqrt: v(Rsqrt<T>{}); return true;
        case UnaryOp::Sin: v(Sin<T>{}); return true;
        case UnaryOp::Cos: v(Cos<T>{}); return true;
        case UnaryOp::Tanh: v(Tanh<T>{}); return true;
        case UnaryOp::Sigmoid: v(Sigmoid<T>{}); return true;
        case UnaryOp::Reciprocal: v(Reciprocal<T>{}); return true;
        case UnaryOp::Erf: v(Erf<T>{}); return true;
        case UnaryOp::GeluErf: v(GeluErf<T>{}); return true;
        case UnaryOp::GeluTanh: v(GeluTanh<T>{}); return true;
        case UnaryOp::Silu: v(Silu<T>{}); return true;
        default: return false;
      }
    } else {
      switch (op) {
        case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Round:
          v(Identity<T>{});  // integers are already whole
          return true;
        default: return false;
      }
    }
  }
}

// ---- softplus
template <class T> struct Softplus {
  T beta, threshold;
  __device__ T operator()(T x) const { return x * beta > threshold ? x : dmath::log1p(dmath::exp(x * beta)) / beta; }
};

template <class T, class V>
bool visit_softplus(double beta, double threshold, V&& v) {
  if constexpr (!std::is_floating_point_v<T>) return false;
  else v(Softplus<T>{static_cast<T>(beta), static_cast<T>(threshold)});
  return true;
}

// ---- clamp with number bounds: a NaN bound makes every element NaN; NaN
// inputs fail both comparisons and pass through.
template <class T> struct Fill {
  T value;
  __device__ T operator()(T) const { return value; }
};
template <class T> struct ClampBoth {
  T lo, hi;
  __device__ T operator()(T x) const { return x < lo ? (lo > hi ? hi : lo) : x > hi ? hi : x; }
};
template <class T> struct ClampMin {
  T lo;
  __device__ T operator()(T x) const { return x < lo ? lo : x; }
};
template <class T> struct ClampMax {
  T hi;
  __device__ T operator()(T x) const { return x > hi ? hi : x; }
};

template <class T, class V>
void visit_clamp(const std::optional<Scalar>& lo, const std::optional<Scalar>& hi, V&& v) {
  const T l = lo ? lo->to<T>() : T(0);
  const T h = hi ? hi->to<T>() : T(0);
  const bool l_nan = l != l, h_nan = h != h;  // only floating bounds can be NaN
  if (l_nan || h_nan) return v(Fill<T>{l_nan ? l : h});
  if (lo && hi) return v(ClampBoth<T>{l, h});
  if (lo) return v(ClampMin<T>{l});
  if (hi) return v(ClampMax<T>{h});
  v(Identity<T>{});
}

// ---- clamp with tensor bounds: a NaN in the input or a bound gives NaN.
template <class T>
__device__ inline T clamp_lower(T x, T l) {
  return dmath::is_nan(x) || dmath::is_nan(l) ? static_cast<T>(x + l) : x < l ? l : x;
}
template <class T>
__device__ inline T clamp_upper(T x, T h) {
  return dmath::is_nan(x) || dmath::is_nan(h) ? static_cast<T>(x + h) : x > h ? h : x;
}
template <class T> struct ClampTensorBoth {
  __device__ T operator()(T x, T l, T h) const { return clamp_upper(clamp_lower(x, l), h); }
};
template <class T> struct ClampTensorMin {
  __device__ T operator()(T x, T l) const { return clamp_lower(x, l); }
};
template <class T> struct ClampTensorMax {
  __device__ T operator()(T x, T h) const { return clamp_upper(x, h); }
};

// ---- pow
template <class T> struct Cube { __device__ T operator()(T x) const { return x * x * x; } };
template <class T> struct PowScalar {
  T e;
  __device__ T operator()(T x) const { return dmath::pow(x, e); }
};
template <class T> struct IntPowScalar {
  int64_t e;
  __device__ T operator()(T x) const { return int_math::pow<T>(x, e); }
};
template <class T> struct Pow { __device__ T operator()(T x, T e) const { return dmath::pow(x, e); } };
template <class T> struct IntPow {
  __device__ T operator()(T x, T e) const { return int_math::pow<T>(x, static_cast<int64_t>(e)); }
};

// Common float exponents get exact, fast forms (as on the CPU).
template <class T, class V>
bool visit_pow_scalar(const Scalar& exponent, V&& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else if constexpr (std::is_floating_point_v<T>) {
    const double e = exponent.to_double();
    if (e == 2.0) v(Square<T>{});
    else if (e == 3.0) v(Cube<T>{});
    else if (e == 1.0) v(Identity<T>{});
    else if (e == 0.5) v(Sqrt<T>{});
    else if (e == -1.0) v(Reciprocal<T>{});
    else if (e == -0.5) v(Rsqrt<T>{});
    else v(PowScalar<T>{static_cast<T>(e)});
    return true;
  } else {
    v(IntPowScalar<T>{exponent.to_int()});
    return true;
  }
}

template <class T, class V>
bool visit_pow(V&& v) {
  if constexpr (std::is_same_v<T, bool>) return false;
  else if constexpr (std::is_floating_point_v<T>) v(Pow<T>{});
  else v(IntPow<T>{});
  return true;
}

// ---- nan_to_num and the masks of backward formulas
template <class T> struct NanToNum {
  T nan, posinf, neginf;
  __device__ T operator()(T x) const {
    const T inf = std::numeric_limits<T>::infinity();
    return x != x ? nan : x == inf ? posinf : x == -inf ? neginf : x;
  }
};

template <class T, class V>
void visit_nan_to_num(double nan, double posinf, double neginf, V&& v) {
  if constexpr (std::is_floating_point_v<T>) {
    v(NanToNum<T>{static_cast<T>(nan), static_cast<T>(posinf), static_cast<T>(neginf)});
  } else {
    v(Identity<T>{});
  }
}

template <class T> struct InRange {  // NaN gives 0
  T lo, hi;
  __device__ T operator()(T x) const { return x >= lo && x <= hi ? T(1) : T(0); }
};

template <class T, class V>
bool visit_in_range_mask(std::optional<double> lo, std::optional<double> hi, V&& v) {
  if constexpr (!std::is_floating_point_v<T>) {
    return false;
  } else {
    v(InRange<T>{lo ? static_cast<T>(*lo) : -std::numeric_limits<T>::infinity(),
                 hi ? static_cast<T>(*hi) : std::numeric_limits<T>::infinity()});
    return true;
  }
}

template <class T> struct IsFinite {  // x - x is NaN for NaN and inf
  __device__ T operator()(T x) const { return x - x == T(0) ? T(1) : T(0); }
};
template <class T> struct KeepWhere {
  __device__ T operator()(T v, T k) const { return k != T(0) ? v : T(0); }
};

}  // namespace
}  // namespace unary_ops
}  // namespace ember::cuda
