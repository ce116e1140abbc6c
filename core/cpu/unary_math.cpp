// CPU kernels of the extra math functions (core/cpu/unary_math.h): one scalar
// formula per op, run by cpu::map. The CUDA kernels (cuda/device/
// unary_math_ops.cuh) compute the same formulas.
#include <ember/core/cpu/unary_math.h>

#include <cmath>

#include <ember/core/cpu/fast_math.h>
#include <ember/core/cpu/loops.h>
#include <ember/core/error.h>
#include <ember/core/special_math.h>

namespace ember::cpu {

namespace {

// lgamma_r does not write the global signgam (std::lgamma may: a data race
// between the threads of a parallel loop).
double log_gamma(double x) {
  int sign;
  return ::lgamma_r(x, &sign);
}

template <class T>
void unary_typed(MathOp op, const TensorIterator& it) {
  switch (op) {
    case MathOp::Log2: return map<T, T>(it, [](T x) { return std::log2(x); });
    case MathOp::Log10: return map<T, T>(it, [](T x) { return std::log10(x); });
    case MathOp::Exp2: return map<T, T>(it, [](T x) { return std::exp2(x); });
    case MathOp::Sinh: return map<T, T>(it, [](T x) { return std::sinh(x); });
    case MathOp::Cosh: return map<T, T>(it, [](T x) { return std::cosh(x); });
    case MathOp::Tan: return map<T, T>(it, [](T x) { return std::tan(x); });
    case MathOp::Asin: return map<T, T>(it, [](T x) { return std::asin(x); });
    case MathOp::Acos: return map<T, T>(it, [](T x) { return std::acos(x); });
    case MathOp::Atan: return map<T, T>(it, [](T x) { return std::atan(x); });
    case MathOp::Asinh: return map<T, T>(it, [](T x) { return std::asinh(x); });
    case MathOp::Acosh: return map<T, T>(it, [](T x) { return std::acosh(x); });
    case MathOp::Atanh: return map<T, T>(it, [](T x) { return std::atanh(x); });
    case MathOp::Trunc: return map<T, T>(it, [](T x) { return std::trunc(x); });
    case MathOp::Frac: return map<T, T>(it, [](T x) { return x - std::trunc(x); });
    case MathOp::Erfc: return map<T, T>(it, [](T x) { return std::erfc(x); });
    case MathOp::Lgamma: return map<T, T>(it, [](T x) { return static_cast<T>(log_gamma(x)); });
    case MathOp::Digamma: return map<T, T>(it, [](T x) { return static_cast<T>(special::digamma(x)); });
    case MathOp::Trigamma: return map<T, T>(it, [](T x) { return static_cast<T>(special::trigamma(x)); });
    case MathOp::Erfinv: return map<T, T>(it, [](T x) { return static_cast<T>(special::erfinv(x)); });
  }
  throw Error("unary_math: unknown op");
}

// log(exp(a) + exp(b)) without overflow; equal infinities give that infinity.
template <class T>
T log_add_exp(T a, T b) {
  const T m = std::fmax(a, b);
  if (std::isinf(m) && a == b) return m;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

template <class T>
T log_add_exp2(T a, T b) {
  const T m = std::fmax(a, b);
  if (std::isinf(m) && a == b) return m;
  return m + std::log1p(std::exp2(-std::fabs(a - b))) / T(0.69314718055994530942);
}

// The gradients' exp, erf and tanh, and atan2: the vectorizing float32 versions for float.
// Forced inline, so that the elementwise loop around them vectorizes.
template <class T>
[[gnu::always_inline]] inline T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) return fast::exp(x);
  else return std::exp(x);
}
template <class T>
[[gnu::always_inline]] inline T erf_of(T x) {
  if constexpr (std::is_same_v<T, float>) return fast::erf(x);
  else return std::erf(x);
}
template <class T>
[[gnu::always_inline]] inline T tanh_of(T x) {
  if constexpr (std::is_same_v<T, float>) return fast::tanh(x);
  else return std::tanh(x);
}

template <class T>
[[gnu::always_inline]] inline T atan2_of(T y, T x) {
  if constexpr (std::is_same_v<T, float>) return fast::atan2(y, x);
  else return std::atan2(y, x);
}

// g * d/dx [x Phi(x)] = g (Phi(x) + x phi(x)).
template <class T>
[[gnu::always_inline]] inline T gelu_backward(T g, T x) {
  const T cdf = T(0.5) * (T(1) + erf_of(x * T(0.70710678118654752440)));
  const T pdf = T(0.39894228040143267794) * exp_of(T(-0.5) * x * x);
  return g * (cdf + x * pdf);
}

// y = x/2 (1 + tanh(u)), u = k (x + c x^3): dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3c x^2).
template <class T>
[[gnu::always_inline]] inline T gelu_tanh_backward(T g, T x) {
  const T k = T(0.79788456080286535588), c = T(0.044715);
  const T x2 = x * x;
  const T t = tanh_of(k * (x + c * x2 * x));
  return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3) * c * x2));
}

// d/dx x s(x) = s (1 + x (1 - s)).
template <class T>
[[gnu::always_inline]] inline T silu_backward(T g, T x) {
  const T s = T(1) / (T(1) + exp_of(-x));
  return g * s * (T(1) + x * (T(1) - s));
}

template <class T>
void binary_typed(MathOp2 op, const TensorIterator& it) {
  switch (op) {
    case MathOp2::Atan2: return map<T, T, T>(it, [](T a, T b) { return atan2_of(a, b); });
    case MathOp2::Hypot: return map<T, T, T>(it, [](T a, T b) { return std::hypot(a, b); });
    case MathOp2::Fmod: return map<T, T, T>(it, [](T a, T b) { return std::fmod(a, b); });
    case MathOp2::Copysign: return map<T, T, T>(it, [](T a, T b) { return std::copysign(a, b); });
    case MathOp2::LogAddExp: return map<T, T, T>(it, [](T a, T b) { return log_add_exp(a, b); });
    case MathOp2::LogAddExp2: return map<T, T, T>(it, [](T a, T b) { return log_add_exp2(a, b); });
    case MathOp2::Xlogy:  // 0 where x is 0 (unless y is NaN), as PyTorch
      return map<T, T, T>(it, [](T x, T y) { return y != y ? y : x == T(0) ? T(0) : x * std::log(y); });
    case MathOp2::GeluBackward: return map<T, T, T>(it, [](T g, T x) { return gelu_backward(g, x); });
    case MathOp2::GeluTanhBackward: return map<T, T, T>(it, [](T g, T x) { return gelu_tanh_backward(g, x); });
    case MathOp2::SiluBackward: return map<T, T, T>(it, [](T g, T x) { return silu_backward(g, x); });
    case MathOp2::TanhBackward: return map<T, T, T>(it, [](T g, T y) { return g * (T(1) - y * y); });
    case MathOp2::SigmoidBackward: return map<T, T, T>(it, [](T g, T y) { return g * (y * (T(1) - y)); });
  }
  throw Error("binary_math: unknown op");
}

template <class F>
void float_dispatch(DType dtype, const char* op, F f) {
  if (dtype == DType::Float32) return f(float{});
  if (dtype == DType::Float64) return f(double{});
  throw Error(str(op, ": the CPU kernel needs float32 or float64, got ", dtype_name(dtype)));
}

}  // namespace

void unary_math(MathOp op, Tensor& out, const Tensor& in) {
  TensorIterator it({out, in});
  float_dispatch(out.dtype(), "unary_math", [&](auto tag) { unary_typed<decltype(tag)>(op, it); });
}

void binary_math(MathOp2 op, Tensor& out, const Tensor& a, const Tensor& b) {
  TensorIterator it({out, a, b});
  float_dispatch(out.dtype(), "binary_math", [&](auto tag) { binary_typed<decltype(tag)>(op, it); });
}

}  // namespace ember::cpu
