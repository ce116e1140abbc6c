// CPU kernels of the binary family: scalar functors run by cpu::map over a
// TensorIterator. Half types never reach the arithmetic kernels (the
// front-ends compute them in float32); where and masked_fill only move
// values, so they run on every dtype.
#include <ember/core/cpu/binary.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <type_traits>

#include <ember/core/cpu/loops.h>
#include <ember/core/int_math.h>

namespace ember::cpu {

namespace {

// ---- rounding division and remainder with Python's sign rules

// Python's float floor division: derived from fmod so that
// floor_div(a, b) * b + remainder(a, b) == a as closely as rounding allows.
template <class T>
T floor_div_float(T a, T b) {
  if (b == T(0)) return a / b;  // inf or nan, as true division
  const T mod = std::fmod(a, b);
  T q = (a - mod) / b;
  if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) q -= T(1);
  if (q == T(0)) return std::copysign(T(0), a / b);
  T f = std::floor(q);
  if (q - f > T(0.5)) f += T(1);  // (a - mod) / b may land just below an integer
  return f;
}

template <class T>
T remainder_float(T a, T b) {
  T m = std::fmod(a, b);
  if (m != T(0) && ((b < T(0)) != (m < T(0)))) m += b;
  return m;
}

// Integer kernels note a zero divisor in `zero` and return 0 for it; the
// caller throws once the (possibly parallel) loop is done. The formulas are
// core/int_math.h's, which the CUDA kernels use too.
template <class T>
T noting_zero(T b, std::atomic<bool>& zero) {
  if (b == T(0)) zero.store(true, std::memory_order_relaxed);
  return b;
}

template <class T>
T div_trunc_int(T a, T b, std::atomic<bool>& zero) { return int_math::div_trunc(a, noting_zero(b, zero)); }

template <class T>
T div_floor_int(T a, T b, std::atomic<bool>& zero) { return int_math::div_floor(a, noting_zero(b, zero)); }

template <class T>
T remainder_int(T a, T b, std::atomic<bool>& zero) { return int_math::remainder(a, noting_zero(b, zero)); }

// NaN-propagating max/min (std::max would drop a NaN in the second place).
template <class T>
T maximum_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
  }
  return a > b ? a : b;
}

template <class T>
T minimum_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
  }
  return a < b ? a : b;
}

// a + s * b and a - s * b. Integers wrap around on overflow (core/int_math.h);
// floats stay one expression, which the compiler may contract into an fma.
template <class T>
T add_scaled(T a, T s, T b) {
  if constexpr (std::is_integral_v<T>) return int_math::wrapping_add(a, int_math::wrapping_mul(s, b));
  else return static_cast<T>(a + s * b);
}

template <class T>
T sub_scaled(T a, T s, T b) {
  if constexpr (std::is_integral_v<T>) return int_math::wrapping_sub(a, int_math::wrapping_mul(s, b));
  else return static_cast<T>(a - s * b);
}

// ---- op families by result kind

// +, - and * wrap around on integer overflow (INT_MAX + 1 is INT_MIN, as in
// numpy); for floats the int_math helpers are the plain operators.
template <class T>
void arithmetic(BinaryOp op, const TensorIterator& it, const Scalar& alpha, std::atomic<bool>& zero) {
  switch (op) {
    case BinaryOp::Add: {
      const T s = alpha.to<T>();
      if (s == T(1)) return map<T, T, T>(it, [](T a, T b) { return int_math::wrapping_add(a, b); });
      return map<T, T, T>(it, [s](T a, T b) { return add_scaled(a, s, b); });
    }
    case BinaryOp::Sub: {
      const T s = alpha.to<T>();
      if (s == T(1)) return map<T, T, T>(it, [](T a, T b) { return int_math::wrapping_sub(a, b); });
      return map<T, T, T>(it, [s](T a, T b) { return sub_scaled(a, s, b); });
    }
    case BinaryOp::Mul: return map<T, T, T>(it, [](T a, T b) { return int_math::wrapping_mul(a, b); });
    case BinaryOp::Div:
      if constexpr (std::is_floating_point_v<T>) {
        return map<T, T, T>(it, [](T a, T b) { return static_cast<T>(a / b); });
      }
      break;
    case BinaryOp::DivTrunc:
      if constexpr (std::is_floating_point_v<T>) {
        return map<T, T, T>(it, [](T a, T b) { return std::trunc(a / b); });
      } else {
        return map<T, T, T>(it, [&zero](T a, T b) { return div_trunc_int(a, b, zero); });
      }
    case BinaryOp::DivFloor:
      if constexpr (std::is_floating_point_v<T>) {
        return map<T, T, T>(it, [](T a, T b) { return floor_div_float(a, b); });
      } else {
        return map<T, T, T>(it, [&zero](T a, T b) { return div_floor_int(a, b, zero); });
      }
    case BinaryOp::Remainder:
      if constexpr (std::is_floating_point_v<T>) {
        return map<T, T, T>(it, [](T a, T b) { return remainder_float(a, b); });
      } else {
        return map<T, T, T>(it, [&zero](T a, T b) { return remainder_int(a, b, zero); });
      }
    case BinaryOp::Maximum: return map<T, T, T>(it, [](T a, T b) { return maximum_of(a, b); });
    case BinaryOp::Minimum: return map<T, T, T>(it, [](T a, T b) { return minimum_of(a, b); });
    case BinaryOp::BitwiseAnd:
      if constexpr (std::is_integral_v<T>) return map<T, T, T>(it, [](T a, T b) { return static_cast<T>(a & b); });
      break;
    case BinaryOp::BitwiseOr:
      if constexpr (std::is_integral_v<T>) return map<T, T, T>(it, [](T a, T b) { return static_cast<T>(a | b); });
      break;
    case BinaryOp::BitwiseXor:
      if constexpr (std::is_integral_v<T>) return map<T, T, T>(it, [](T a, T b) { return static_cast<T>(a ^ b); });
      break;
    default: break;
  }
  throw Error("binary: unsupported op for this dtype");
}

// bool arithmetic as PyTorch defines it: + is or, * is and.
void bool_arithmetic(BinaryOp op, const TensorIterator& it, const Scalar& alpha) {
  switch (op) {
    case BinaryOp::Add:
      if (!alpha.to_bool()) return map<bool, bool, bool>(it, [](bool a, bool) { return a; });
      [[fallthrough]];
    case BinaryOp::Maximum:
    case BinaryOp::BitwiseOr: return map<bool, bool, bool>(it, [](bool a, bool b) { return a || b; });
    case BinaryOp::Mul:
    case BinaryOp::Minimum:
    case BinaryOp::BitwiseAnd: return map<bool, bool, bool>(it, [](bool a, bool b) { return a && b; });
    case BinaryOp::BitwiseXor: return map<bool, bool, bool>(it, [](bool a, bool b) { return a != b; });
    default: break;
  }
  throw TypeError("binary: this arithmetic op is not supported on bool tensors");
}

template <class T>
void compare(BinaryOp op, const TensorIterator& it) {
  switch (op) {
    case BinaryOp::Eq: return map<bool, T, T>(it, [](T a, T b) { return a == b; });
    case BinaryOp::Ne: return map<bool, T, T>(it, [](T a, T b) { return a != b; });
    case BinaryOp::Lt: return map<bool, T, T>(it, [](T a, T b) { return a < b; });
    case BinaryOp::Le: return map<bool, T, T>(it, [](T a, T b) { return a <= b; });
    case BinaryOp::Gt: return map<bool, T, T>(it, [](T a, T b) { return a > b; });
    case BinaryOp::Ge: return map<bool, T, T>(it, [](T a, T b) { return a >= b; });
    case BinaryOp::LogicalAnd: return map<bool, T, T>(it, [](T a, T b) { return a != T(0) && b != T(0); });
    case BinaryOp::LogicalOr: return map<bool, T, T>(it, [](T a, T b) { return a != T(0) || b != T(0); });
    case BinaryOp::LogicalXor: return map<bool, T, T>(it, [](T a, T b) { return (a != T(0)) != (b != T(0)); });
    default: break;
  }
  throw Error("binary: not a comparison");
}

// A Scalar as element type T (half types go through float).
template <class T>
T scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(s.to_double()));
  else return s.to<T>();
}

}  // namespace

void binary(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  TensorIterator it({out, a, b});
  if (it.numel() == 0) return;
  std::atomic<bool> zero{false};
  dispatch_math(a.dtype(), "binary", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (is_bool_result(op)) {
      compare<T>(op, it);
    } else if constexpr (std::is_same_v<T, bool>) {
      bool_arithmetic(op, it, alpha);
    } else {
      arithmetic<T>(op, it, alpha, zero);
    }
  });
  EMBER_CHECK(!zero.load(), Error, op == BinaryOp::Remainder ? "remainder" : "div",
              ": ZeroDivisionError (integer division or remainder by zero)");
}

bool all_equal(const Tensor& a, const Tensor& b) {
  return dispatch_math(a.dtype(), "equal", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = a.data<T>();
    const T* q = b.data<T>();
    const int64_t n = a.numel();
    constexpr int64_t kBlock = 16384;  // a block's compares vectorize; a difference ends the scan
    std::atomic<bool> same{true};
    parallel_for(0, (n + kBlock - 1) / kBlock, std::max<int64_t>(1, kElementwiseGrain / kBlock),
                 [&](int64_t begin, int64_t end) {
      for (int64_t blk = begin; blk < end && same.load(std::memory_order_relaxed); ++blk) {
        const int64_t lo = blk * kBlock, hi = std::min(n, lo + kBlock);
        int differ = 0;
        for (int64_t i = lo; i < hi; ++i) differ |= !(p[i] == q[i]);
        if (differ) same.store(false, std::memory_order_relaxed);
      }
    });
    return same.load();
  });
}

void logical_not(Tensor& out, const Tensor& a) {
  TensorIterator it({out, a});
  if (it.numel() == 0) return;
  dispatch_math(a.dtype(), "logical_not", [&](auto tag) {
    using T = typename decltype(tag)::type;
    map<bool, T>(it, [](T v) { return v == T(0); });
  });
}

void bitwise_not(Tensor& out, const Tensor& a) {
  TensorIterator it({out, a});
  if (it.numel() == 0) return;
  dispatch_math(a.dtype(), "bitwise_not", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      map<bool, bool>(it, [](bool v) { return !v; });
    } else if constexpr (std::is_integral_v<T>) {
      map<T, T>(it, [](T v) { return static_cast<T>(~v); });
    } else {
      throw TypeError("bitwise_not: only integral and bool tensors are supported");
    }
  });
}

void where(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  TensorIterator it({out, cond, a, b});
  if (it.numel() == 0) return;
  dispatch(out.dtype(), "where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    map<T, bool, T, T>(it, [](bool c, T x, T y) { return c ? x : y; });
  });
}

void lerp(Tensor& out, const Tensor& start, const Tensor& end, const Tensor& weight) {
  TensorIterator it({out, start, end, weight});
  if (it.numel() == 0) return;
  dispatch_math(out.dtype(), "lerp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      // Interpolate from the nearer end, so lerp(a, b, 1) == b exactly.
      map<T, T, T, T>(it, [](T s, T e, T w) {
        return std::abs(w) < T(0.5) ? s + w * (e - s) : e - (e - s) * (T(1) - w);
      });
    } else {
      throw TypeError("lerp: only floating point tensors are supported");
    }
  });
}

void masked_fill(Tensor& out, const Tensor& self, const Tensor& mask, const Scalar& value) {
  TensorIterator it({out, self, mask});
  if (it.numel() == 0) return;
  dispatch(out.dtype(), "masked_fill", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = scalar_as<T>(value);
    map<T, T, bool>(it, [v](T x, bool m) { return m ? v : x; });
  });
}

}  // namespace ember::cpu
