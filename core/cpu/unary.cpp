// CPU kernels for unary elementwise ops: one scalar functor per op, run by
// cpu::map, whose contiguous loop the compiler vectorizes. float32 exp, log
// and erf based ops use core/cpu/fast_math.h, which vectorizes where libm
// does not.

#include <ember/core/cpu/unary.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include <ember/core/cpu/fast_math.h>
#include <ember/core/int_math.h>
#include <ember/core/cpu/loops.h>

namespace ember::cpu {

namespace {

constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kSqrtHalf = 0.70710678118654752440;     // 1 / sqrt(2)

template <class T> bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}

// Ops every math dtype has; integer versions keep the dtype and wrap around
// on overflow (-INT_MIN and INT_MIN * INT_MIN are INT_MIN and 0, as in numpy);
// for floats the int_math helpers are the plain operators.
template <class T>
bool common_op(UnaryOp op, const TensorIterator& it) {
  switch (op) {
    case UnaryOp::Neg: map<T, T>(it, [](T x) { return int_math::wrapping_neg(x); }); return true;
    case UnaryOp::Abs:
      if constexpr (std::is_unsigned_v<T>) map<T, T>(it, [](T x) { return x; });
      else if constexpr (std::is_floating_point_v<T>) map<T, T>(it, [](T x) { return std::fabs(x); });  // -0 -> +0
      else map<T, T>(it, [](T x) { return int_math::wrapping_abs(x); });
      return true;
    case UnaryOp::Sign:
      // NaN gives 0, as in PyTorch (numpy keeps NaN).
      map<T, T>(it, [](T x) { return x > T(0) ? T(1) : x < T(0) ? static_cast<T>(-1) : T(0); });
      return true;
    case UnaryOp::Square: map<T, T>(it, [](T x) { return int_math::wrapping_mul(x, x); }); return true;
    case UnaryOp::Relu: map<T, T>(it, [](T x) { return x > T(0) || is_nan(x) ? x : T(0); }); return true;
    default: return false;
  }
}

// float32 ops with vectorizable implementations; false when op has none.
bool fast_float_op(UnaryOp op, const TensorIterator& it) {
  switch (op) {
    case UnaryOp::Exp: map<float, float>(it, [](float x) { return fast::exp(x); }); return true;
    case UnaryOp::Expm1: map<float, float>(it, [](float x) { return fast::expm1(x); }); return true;
    case UnaryOp::Tanh: map<float, float>(it, [](float x) { return fast::tanh(x); }); return true;
    case UnaryOp::Sigmoid: map<float, float>(it, [](float x) { return fast::sigmoid(x); }); return true;
    case UnaryOp::Silu: map<float, float>(it, [](float x) { return x * fast::sigmoid(x); }); return true;
    case UnaryOp::Log: map<float, float>(it, [](float x) { return fast::log(x); }); return true;
    case UnaryOp::Log1p: map<float, float>(it, [](float x) { return fast::log1p(x); }); return true;
    case UnaryOp::Erf: map<float, float>(it, [](float x) { return fast::erf(x); }); return true;
    case UnaryOp::GeluErf:
      map<float, float>(it, [](float x) { return 0.5f * x * (1.0f + fast::erf(x * static_cast<float>(kSqrtHalf))); });
      return true;
    case UnaryOp::GeluTanh:
      map<float, float>(it, [](float x) {
        const float inner = static_cast<float>(kSqrt2OverPi) * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.0f + fast::tanh(inner));
      });
      return true;
    default: return false;
  }
}

template <class T>
void floating_op(UnaryOp op, const TensorIterator& it) {
  if (common_op<T>(op, it)) return;
  if constexpr (std::is_same_v<T, float>) {
    if (fast_float_op(op, it)) return;
  }
  switch (op) {
    case UnaryOp::Floor: return map<T, T>(it, [](T x) { return std::floor(x); });
    case UnaryOp::Ceil: return map<T, T>(it, [](T x) { return std::ceil(x); });
    case UnaryOp::Round: return map<T, T>(it, [](T x) { return std::nearbyint(x); });  // half to even
    case UnaryOp::Exp: return map<T, T>(it, [](T x) { return std::exp(x); });
    case UnaryOp::Log: return map<T, T>(it, [](T x) { return std::log(x); });
    case UnaryOp::Log1p: return map<T, T>(it, [](T x) { return std::log1p(x); });
    case UnaryOp::Expm1: return map<T, T>(it, [](T x) { return std::expm1(x); });
    case UnaryOp::Sqrt: return map<T, T>(it, [](T x) { return std::sqrt(x); });
    case UnaryOp::Rsqrt: return map<T, T>(it, [](T x) { return T(1) / std::sqrt(x); });
    case UnaryOp::Sin: return map<T, T>(it, [](T x) { return std::sin(x); });
    case UnaryOp::Cos: return map<T, T>(it, [](T x) { return std::cos(x); });
    case UnaryOp::Tanh: return map<T, T>(it, [](T x) { return std::tanh(x); });
    case UnaryOp::Sigmoid: return map<T, T>(it, [](T x) { return T(1) / (T(1) + std::exp(-x)); });
    case UnaryOp::Reciprocal: return map<T, T>(it, [](T x) { return T(1) / x; });
    case UnaryOp::Erf: return map<T, T>(it, [](T x) { return std::erf(x); });
    case UnaryOp::GeluErf:
      return map<T, T>(it, [](T x) { return T(0.5) * x * (T(1) + std::erf(x * T(kSqrtHalf))); });
    case UnaryOp::GeluTanh:
      return map<T, T>(it, [](T x) {
        const T inner = T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x);
        return T(0.5) * x * (T(1) + std::tanh(inner));
      });
    case UnaryOp::Silu: return map<T, T>(it, [](T x) { return x / (T(1) + std::exp(-x)); });
    default: break;
  }
  throw Error("unary: unsupported op for floating dtypes");
}

template <class T>
void integer_op(UnaryOp op, const TensorIterator& it) {
  if (common_op<T>(op, it)) return;
  switch (op) {
    case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Round:
      return map<T, T>(it, [](T x) { return x; });  // integers are already whole
    default: break;
  }
  throw TypeError("unary: this op needs a floating point tensor");
}


}  // namespace

void unary(UnaryOp op, Tensor& out, const Tensor& in) {
  TensorIterator it({out, in});
  dispatch_math(out.dtype(), "unary", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      // Only the ops that map bool to itself get here.
      if (op == UnaryOp::Abs || op == UnaryOp::Sign) return map<bool, bool>(it, [](bool x) { return x; });
      throw TypeError("unary: this op does not support bool tensors");
    } else if constexpr (std::is_floating_point_v<T>) {
      floating_op<T>(op, it);
    } else {
      integer_op<T>(op, it);
    }
  });
}

void softplus(Tensor& out, const Tensor& in, double beta, double threshold) {
  TensorIterator it({out, in});
  dispatch_math(out.dtype(), "softplus", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      const float b = static_cast<float>(beta), th = static_cast<float>(threshold);
      map<float, float>(it, [b, th](float x) { return x * b > th ? x : fast::log1p(fast::exp(x * b)) / b; });
    } else if constexpr (std::is_floating_point_v<T>) {
      const T b = static_cast<T>(beta), th = static_cast<T>(threshold);
      map<T, T>(it, [b, th](T x) { return x * b > th ? x : std::log1p(std::exp(x * b)) / b; });
    } else {
      throw TypeError("softplus: needs a floating point tensor");
    }
  });
}

void clamp(Tensor& out, const Tensor& in, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  TensorIterator it({out, in});
  dispatch_math(out.dtype(), "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T l = lo ? lo->to<T>() : T(0);
    const T h = hi ? hi->to<T>() : T(0);
    if (is_nan(l) || is_nan(h)) {  // a NaN bound makes every element NaN
      const T nan = is_nan(l) ? l : h;
      return map<T, T>(it, [nan](T) { return nan; });
    }
    // NaN inputs fail both comparisons and pass through.
    if (lo && hi) {
      map<T, T>(it, [l, h](T x) { return x < l ? (l > h ? h : l) : x > h ? h : x; });
    } else if (lo) {
      map<T, T>(it, [l](T x) { return x < l ? l : x; });
    } else if (hi) {
      map<T, T>(it, [h](T x) { return x > h ? h : x; });
    } else {
      map<T, T>(it, [](T x) { return x; });
    }
  });
}

void clamp_tensor(Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi) {
  // A NaN in the input or a bound makes the result NaN.
  auto lower = [](auto x, auto l) { return is_nan(x) || is_nan(l) ? x + l : x < l ? l : x; };
  auto upper = [](auto x, auto h) { return is_nan(x) || is_nan(h) ? x + h : x > h ? h : x; };
  dispatch_math(out.dtype(), "clamp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (lo.defined() && hi.defined()) {
      map<T, T, T, T>(TensorIterator({out, in, lo, hi}),
                      [&](T x, T l, T h) { return static_cast<T>(upper(static_cast<T>(lower(x, l)), h)); });
    } else if (lo.defined()) {
      map<T, T, T>(TensorIterator({out, in, lo}), [&](T x, T l) { return static_cast<T>(lower(x, l)); });
    } else {
      map<T, T, T>(TensorIterator({out, in, hi}), [&](T x, T h) { return static_cast<T>(upper(x, h)); });
    }
  });
}

void pow_scalar(Tensor& out, const Tensor& in, const Scalar& exponent) {
  TensorIterator it({out, in});
  dispatch_math(out.dtype(), "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("pow: bool tensors are not supported");
    } else if constexpr (std::is_floating_point_v<T>) {
      const double e = exponent.to_double();
      // Common exponents get exact, fast forms.
      if (e == 2.0) return map<T, T>(it, [](T x) { return x * x; });
      if (e == 3.0) return map<T, T>(it, [](T x) { return x * x * x; });
      if (e == 1.0) return map<T, T>(it, [](T x) { return x; });
      if (e == 0.5) return map<T, T>(it, [](T x) { return std::sqrt(x); });
      if (e == -1.0) return map<T, T>(it, [](T x) { return T(1) / x; });
      if (e == -0.5) return map<T, T>(it, [](T x) { return T(1) / std::sqrt(x); });
      const T te = static_cast<T>(e);
      map<T, T>(it, [te](T x) { return std::pow(x, te); });
    } else {
      const int64_t e = exponent.to_int();
      map<T, T>(it, [e](T x) { return int_math::pow<T>(x, e); });
    }
  });
}

void pow(Tensor& out, const Tensor& base, const Tensor& exponent) {
  TensorIterator it({out, base, exponent});
  dispatch_math(out.dtype(), "pow", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("pow: bool tensors are not supported");
    } else if constexpr (std::is_floating_point_v<T>) {
      map<T, T, T>(it, [](T x, T e) { return std::pow(x, e); });
    } else {
      map<T, T, T>(it, [](T x, T e) { return int_math::pow<T>(x, static_cast<int64_t>(e)); });
    }
  });
}

void nan_to_num(Tensor& out, const Tensor& in, double nan, double posinf, double neginf) {
  TensorIterator it({out, in});
  dispatch_math(out.dtype(), "nan_to_num", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T n = static_cast<T>(nan), p = static_cast<T>(posinf), m = static_cast<T>(neginf);
      constexpr T inf = std::numeric_limits<T>::infinity();
      map<T, T>(it, [=](T x) { return x != x ? n : x == inf ? p : x == -inf ? m : x; });
    } else {
      map<T, T>(it, [](T x) { return x; });
    }
  });
}

void in_range_mask(Tensor& out, const Tensor& in, std::optional<double> lo, std::optional<double> hi) {
  TensorIterator it({out, in});
  dispatch_math(out.dtype(), "in_range_mask", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T l = lo ? static_cast<T>(*lo) : -std::numeric_limits<T>::infinity();
      const T h = hi ? static_cast<T>(*hi) : std::numeric_limits<T>::infinity();
      map<T, T>(it, [l, h](T x) { return x >= l && x <= h ? T(1) : T(0); });
    } else {
      throw TypeError("in_range_mask: needs a floating point tensor");
    }
  });
}

void isfinite_mask(Tensor& out, const Tensor& in) {
  TensorIterator it({out, in});
  dispatch_math(out.dtype(), "isfinite_mask", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      map<T, T>(it, [](T x) { return x - x == T(0) ? T(1) : T(0); });  // false for NaN and inf
    } else {
      throw TypeError("isfinite_mask: needs a floating point tensor");
    }
  });
}

void keep_where(Tensor& out, const Tensor& value, const Tensor& keep) {
  TensorIterator it({out, value, keep});
  dispatch_math(out.dtype(), "keep_where", [&](auto tag) {
    using T = typename decltype(tag)::type;
    map<T, T, T>(it, [](T v, T k) { return k != T(0) ? v : T(0); });
  });
}

}  // namespace ember::cpu
