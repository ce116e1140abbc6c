// The per-element formulas of the binary family's CUDA kernels, and which
// formula each op and element type gets (cuda/binary.cu launches them through
// cuda/device/loops.cuh). In a header without launch code so that
// tests/cpp/test_elementwise_emulation.cpp runs the same formulas on the CPU
// (tests/cpp/cuda_emulation.h) against ember's CPU kernels. Semantics follow
// core/cpu/binary.cpp: Python's sign rules for floor division and remainder,
// NaN-propagating maximum/minimum, bool + and * as or/and; the half types are
// computed in float and rounded once (Widened2). Integer division by zero
// gives 0 (the CPU raises; the GPU cannot without a synchronization).
#pragma once
#include <cstdint>
#include <type_traits>

#ifndef EMBER_CUDA_EMULATION  // tests/cpp/cuda_emulation.h stands in for these
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include <ember/core/cpu/binary.h>
#include <ember/core/int_math.h>
#include <ember/core/scalar.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/math.cuh>
#include <ember/cuda/device/unary_ops.cuh>

namespace ember::cuda::binary_ops {
namespace {  // one copy per including file (the .cu, or its emulation test)

// ---- rounding division and remainder with Python's sign rules

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

// Elements stored as S (a half type) are computed in float by f and rounded once.
template <class S, class F>
struct Widened2 {
  F f;
  __device__ S operator()(S a, S b) const { return convert<S>(f(widen(a), widen(b))); }
};

// The same with a float number as one operand (first or second).
template <class S, class F>
struct NumberThenWidened {
  F f;
  __device__ S operator()(float a, S b) const { return convert<S>(f(a, widen(b))); }
};
template <class S, class F>
struct WidenedThenNumber {
  F f;
  __device__ S operator()(S a, float b) const { return convert<S>(f(widen(a), b)); }
};

// f, computing in T, as it runs on elements stored as S.
template <class S, class T, class F>
auto stored2_as(F f) {
  if constexpr (std::is_same_v<S, T>) return f;
  else return Widened2<S, F>{f};
}

// a * b + c rounded once. nvcc contracts `c + a * b` to this anyway (its
// default --fmad=true), as the CPU kernels' compiler does with FMA units and
// PyTorch's vectorized CPU kernels do by hand; written out so that the result
// does not depend on a compiler's choice and the emulation computes what the
// GPU does (a separate rounding of a * b can turn inf + a * b into NaN).
template <class T>
__device__ inline T fused(T a, T b, T c) {
  if constexpr (std::is_same_v<T, float>) return fmaf(a, b, c);
  else return ::fma(a, b, c);
}

// ---- arithmetic
// Integer overflow wraps around (core/int_math.h), as on the CPU.
template <class T> struct Add {
  __device__ T operator()(T a, T b) const { return int_math::wrapping_add(a, b); }
};
template <class T> struct AddScaled {
  T alpha;
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return fused(alpha, b, a);
    else return int_math::wrapping_add(a, int_math::wrapping_mul(alpha, b));
  }
};
template <class T> struct Sub {
  __device__ T operator()(T a, T b) const { return int_math::wrapping_sub(a, b); }
};
template <class T> struct SubScaled {
  T alpha;
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return fused(-alpha, b, a);
    else return int_math::wrapping_sub(a, int_math::wrapping_mul(alpha, b));
  }
};
template <class T> struct Mul {
  __device__ T operator()(T a, T b) const { return int_math::wrapping_mul(a, b); }
};
template <class T> struct Div { __device__ T operator()(T a, T b) const { return static_cast<T>(a / b); } };
template <class T> struct DivTrunc {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return dmath::trunc(a / b);
    else return int_math::div_trunc(a, b);
  }
};
template <class T> struct DivFloor {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return floor_div_float(a, b);
    else return int_math::div_floor(a, b);
  }
};
template <class T> struct Remainder {
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return remainder_float(a, b);
    else return int_math::remainder(a, b);
  }
};
template <class T> struct Maximum {  // NaN-propagating
  __device__ T operator()(T a, T b) const {
    if (dmath::is_nan(a)) return a;
    if (dmath::is_nan(b)) return b;
    return a > b ? a : b;
  }
};
template <class T> struct Minimum {
  __device__ T operator()(T a, T b) const {
    if (dmath::is_nan(a)) return a;
    if (dmath::is_nan(b)) return b;
    return a < b ? a : b;
  }
};
template <class T> struct BitAnd { __device__ T operator()(T a, T b) const { return static_cast<T>(a & b); } };
template <class T> struct BitOr { __device__ T operator()(T a, T b) const { return static_cast<T>(a | b); } };
template <class T> struct BitXor { __device__ T operator()(T a, T b) const { return static_cast<T>(a ^ b); } };

// Calls v(f) with f the formula of arithmetic `op` for elements computed in T
// (float for the half types; not bool); false when T has none.
template <class T, class V>
bool visit_arithmetic(BinaryOp op, const Scalar& alpha, V&& v) {
  switch (op) {
    case BinaryOp::Add: {
      const T s = alpha.to<T>();
      if (s == T(1)) v(Add<T>{});
      else v(AddScaled<T>{s});
      return true;
    }
    case BinaryOp::Sub: {
      const T s = alpha.to<T>();
      if (s == T(1)) v(Sub<T>{});
      else v(SubScaled<T>{s});
      return true;
    }
    case BinaryOp::Mul: v(Mul<T>{}); return true;
    case BinaryOp::Div:
      if constexpr (!std::is_floating_point_v<T>) return false;  // integers divide as float
      else v(Div<T>{});
      return true;
    case BinaryOp::DivTrunc: v(DivTrunc<T>{}); return true;
    case BinaryOp::DivFloor: v(DivFloor<T>{}); return true;
    case BinaryOp::Remainder: v(Remainder<T>{}); return true;
    case BinaryOp::Maximum: v(Maximum<T>{}); return true;
    case BinaryOp::Minimum: v(Minimum<T>{}); return true;
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case BinaryOp::BitwiseAnd: v(BitAnd<T>{}); return true;
      case BinaryOp::BitwiseOr: v(BitOr<T>{}); return true;
      case BinaryOp::BitwiseXor: v(BitXor<T>{}); return true;
      default: break;
    }
  }
  return false;
}

// ---- bool arithmetic as PyTorch defines it: + is or, * is and
struct First { __device__ bool operator()(bool a, bool) const { return a; } };
struct Or { __device__ bool operator()(bool a, bool b) const { return a || b; } };
struct And { __device__ bool operator()(bool a, bool b) const { return a && b; } };
struct Xor { __device__ bool operator()(bool a, bool b) const { return a != b; } };

template <class V>
bool visit_bool_arithmetic(BinaryOp op, const Scalar& alpha, V&& v) {
  switch (op) {
    case BinaryOp::Add:
      if (!alpha.to_bool()) {
        v(First{});
        return true;
      }
      [[fallthrough]];
    case BinaryOp::Maximum:
    case BinaryOp::BitwiseOr: v(Or{}); return true;
    case BinaryOp::Mul:
    case BinaryOp::Minimum:
    case BinaryOp::BitwiseAnd: v(And{}); return true;
    case BinaryOp::BitwiseXor: v(Xor{}); return true;
    default: return false;
  }
}

// ---- comparisons and logical ops: bool results
template <class T> struct Eq { __device__ bool operator()(T a, T b) const { return a == b; } };
template <class T> struct Ne { __device__ bool operator()(T a, T b) const { return a != b; } };
template <class T> struct Lt { __device__ bool operator()(T a, T b) const { return a < b; } };
template <class T> struct Le { __device__ bool operator()(T a, T b) const { return a <= b; } };
template <class T> struct Gt { __device__ bool operator()(T a, T b) const { return a > b; } };
template <class T> struct Ge { __device__ bool operator()(T a, T b) const { return a >= b; } };
template <class T> struct LogicalAnd {
  __device__ bool operator()(T a, T b) const { return a != T(0) && b != T(0); }
};
template <class T> struct LogicalOr {
  __device__ bool operator()(T a, T b) const { return a != T(0) || b != T(0); }
};
template <class T> struct LogicalXor {
  __device__ bool operator()(T a, T b) const { return (a != T(0)) != (b != T(0)); }
};

template <class T, class V>
bool visit_compare(BinaryOp op, V&& v) {
  switch (op) {
    case BinaryOp::Eq: v(Eq<T>{}); return true;
    case BinaryOp::Ne: v(Ne<T>{}); return true;
    case BinaryOp::Lt: v(Lt<T>{}); return true;
    case BinaryOp::Le: v(Le<T>{}); return true;
    case BinaryOp::Gt: v(Gt<T>{}); return true;
    case BinaryOp::Ge: v(Ge<T>{}); return true;
    case BinaryOp::LogicalAnd: v(LogicalAnd<T>{}); return true;
    case BinaryOp::LogicalOr: v(LogicalOr<T>{}); return true;
    case BinaryOp::LogicalXor: v(LogicalXor<T>{}); return true;
    default: return false;
  }
}

// ---- the other ops of the family
template <class T> struct LogicalNot { __device__ bool operator()(T x) const { return x == T(0); } };
struct BoolNot { __device__ bool operator()(bool x) const { return !x; } };
template <class T> struct BitNot { __device__ T operator()(T x) const { return static_cast<T>(~x); } };

// Interpolates from the nearer end, so lerp(a, b, 1) == b exactly.
template <class T> struct Lerp {
  __device__ T operator()(T s, T e, T w) const {
    const T d = e - s;
    return dmath::fabs(w) < T(0.5) ? fused(w, d, s) : fused(-d, T(1) - w, e);
  }
};

// where and masked_fill only move values: U is an unsigned type of the element size.
template <class U> struct Select {
  __device__ U operator()(bool c, U x, U y) const { return c ? x : y; }
};
template <class U> struct FillWhere {
  U value;
  __device__ U operator()(U x, bool m) const { return m ? value : x; }
};

}  // namespace
}  // namespace ember::cuda::binary_ops
