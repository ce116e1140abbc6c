// The per-element formulas of the extra math functions' CUDA kernels
// (cuda/unary_math.cu), the same as core/cpu/unary_math.cpp's. In a header
// without launch code so that tests/cpp/test_unary_math_emulation.cpp runs
// them on the CPU against the CPU kernels. float and double; the half types
// are computed in float by the launcher's Widened wrappers.
#pragma once
#include <type_traits>

#include <ember/core/cpu/unary_math.h>
#include <ember/core/special_math.h>
#include <ember/cuda/device/math.cuh>

namespace ember::cuda::math_ops {
namespace {  // one copy per including file (the .cu, or its emulation test)

// One name for float and double (CUDA's float functions end in f).
#define EMBER_MATH_FN(name, ffn, dfn)                                   \
  __device__ inline float name(float x) { return ffn(x); }              \
  __device__ inline double name(double x) { return dfn(x); }
EMBER_MATH_FN(log2_, log2f, ::log2)
EMBER_MATH_FN(log10_, log10f, ::log10)
EMBER_MATH_FN(exp2_, exp2f, ::exp2)
EMBER_MATH_FN(sinh_, sinhf, ::sinh)
EMBER_MATH_FN(cosh_, coshf, ::cosh)
EMBER_MATH_FN(tan_, tanf, ::tan)
EMBER_MATH_FN(asin_, asinf, ::asin)
EMBER_MATH_FN(acos_, acosf, ::acos)
EMBER_MATH_FN(atan_, atanf, ::atan)
EMBER_MATH_FN(asinh_, asinhf, ::asinh)
EMBER_MATH_FN(acosh_, acoshf, ::acosh)
EMBER_MATH_FN(atanh_, atanhf, ::atanh)
EMBER_MATH_FN(erfc_, erfcf, ::erfc)
EMBER_MATH_FN(lgamma_, lgammaf, ::lgamma)
EMBER_MATH_FN(log1p_, log1pf, ::log1p)
EMBER_MATH_FN(exp_, expf, ::exp)
#undef EMBER_MATH_FN
#define EMBER_MATH_FN2(name, ffn, dfn)                                         \
  __device__ inline float name(float a, float b) { return ffn(a, b); }         \
  __device__ inline double name(double a, double b) { return dfn(a, b); }
EMBER_MATH_FN2(atan2_, atan2f, ::atan2)
EMBER_MATH_FN2(hypot_, hypotf, ::hypot)
EMBER_MATH_FN2(fmax_, fmaxf, ::fmax)
#undef EMBER_MATH_FN2

// ---- one argument
template <class T> struct Log2 { __device__ T operator()(T x) const { return log2_(x); } };
template <class T> struct Log10 { __device__ T operator()(T x) const { return log10_(x); } };
template <class T> struct Exp2 { __device__ T operator()(T x) const { return exp2_(x); } };
template <class T> struct Sinh { __device__ T operator()(T x) const { return sinh_(x); } };
template <class T> struct Cosh { __device__ T operator()(T x) const { return cosh_(x); } };
template <class T> struct Tan { __device__ T operator()(T x) const { return tan_(x); } };
template <class T> struct Asin { __device__ T operator()(T x) const { return asin_(x); } };
template <class T> struct Acos { __device__ T operator()(T x) const { return acos_(x); } };
template <class T> struct Atan { __device__ T operator()(T x) const { return atan_(x); } };
template <class T> struct Asinh { __device__ T operator()(T x) const { return asinh_(x); } };
template <class T> struct Acosh { __device__ T operator()(T x) const { return acosh_(x); } };
template <class T> struct Atanh { __device__ T operator()(T x) const { return atanh_(x); } };
template <class T> struct Trunc { __device__ T operator()(T x) const { return dmath::trunc(x); } };
template <class T> struct Frac { __device__ T operator()(T x) const { return x - dmath::trunc(x); } };
template <class T> struct Erfc { __device__ T operator()(T x) const { return erfc_(x); } };
template <class T> struct Lgamma { __device__ T operator()(T x) const { return lgamma_(x); } };
template <class T> struct Digamma { __device__ T operator()(T x) const { return static_cast<T>(special::digamma(x)); } };
template <class T> struct Trigamma { __device__ T operator()(T x) const { return static_cast<T>(special::trigamma(x)); } };
template <class T> struct Erfinv { __device__ T operator()(T x) const { return static_cast<T>(special::erfinv(x)); } };

// Calls v(f) with f the formula of `op` on T (float or double).
template <class T, class V>
void visit_unary_math(MathOp op, V&& v) {
  switch (op) {
    case MathOp::Log2: return v(Log2<T>{});
    case MathOp::Log10: return v(Log10<T>{});
    case MathOp::Exp2: return v(Exp2<T>{});
    case MathOp::Sinh: return v(Sinh<T>{});
    case MathOp::Cosh: return v(Cosh<T>{});
    case MathOp::Tan: return v(Tan<T>{});
    case MathOp::Asin: return v(Asin<T>{});
    case MathOp::Acos: return v(Acos<T>{});
    case MathOp::Atan: return v(Atan<T>{});
    case MathOp::Asinh: return v(Asinh<T>{});
    case MathOp::Acosh: return v(Acosh<T>{});
    case MathOp::Atanh: return v(Atanh<T>{});
    case MathOp::Trunc: return v(Trunc<T>{});
    case MathOp::Frac: return v(Frac<T>{});
    case MathOp::Erfc: return v(Erfc<T>{});
    case MathOp::Lgamma: return v(Lgamma<T>{});
    case MathOp::Digamma: return v(Digamma<T>{});
    case MathOp::Trigamma: return v(Trigamma<T>{});
    case MathOp::Erfinv: return v(Erfinv<T>{});
  }
}

// ---- two arguments
template <class T>
__device__ inline T log_add_exp(T a, T b) {
  const T m = fmax_(a, b);
  if (m == a && m == b && (m - m) != (m - m)) return m;  // equal infinities
  return m + log1p_(exp_(-dmath::fabs(a - b)));
}

template <class T>
__device__ inline T log_add_exp2(T a, T b) {
  const T m = fmax_(a, b);
  if (m == a && m == b && (m - m) != (m - m)) return m;
  return m + log1p_(exp2_(-dmath::fabs(a - b))) / T(0.69314718055994530942);
}

template <class T> struct Atan2 { __device__ T operator()(T a, T b) const { return atan2_(a, b); } };
template <class T> struct Hypot { __device__ T operator()(T a, T b) const { return hypot_(a, b); } };
template <class T> struct Fmod { __device__ T operator()(T a, T b) const { return dmath::fmod(a, b); } };
template <class T> struct Copysign { __device__ T operator()(T a, T b) const { return dmath::copysign(a, b); } };
template <class T> struct LogAddExp { __device__ T operator()(T a, T b) const { return log_add_exp(a, b); } };
template <class T> struct LogAddExp2 { __device__ T operator()(T a, T b) const { return log_add_exp2(a, b); } };
template <class T> struct Xlogy {  // 0 where x is 0, unless y is NaN
  __device__ T operator()(T x, T y) const { return y != y ? y : x == T(0) ? T(0) : x * dmath::log(y); }
};

// The fused gradients (g, x): core/cpu/unary_math.cpp has the same formulas.
template <class T> struct GeluBackward {
  __device__ T operator()(T g, T x) const {
    const T cdf = T(0.5) * (T(1) + dmath::erf(x * T(0.70710678118654752440)));
    const T pdf = T(0.39894228040143267794) * exp_(T(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
template <class T> struct GeluTanhBackward {
  __device__ T operator()(T g, T x) const {
    const T k = T(0.79788456080286535588), c = T(0.044715);
    const T x2 = x * x;
    const T t = dmath::tanh(k * (x + c * x2 * x));
    return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3) * c * x2));
  }
};
template <class T> struct SiluBackward {
  __device__ T operator()(T g, T x) const {
    const T s = T(1) / (T(1) + exp_(-x));
    return g * s * (T(1) + x * (T(1) - s));
  }
};

template <class T> struct TanhBackward {  // y = tanh(x)
  __device__ T operator()(T g, T y) const { return g * (T(1) - y * y); }
};
template <class T> struct SigmoidBackward {  // y = sigmoid(x)
  __device__ T operator()(T g, T y) const { return g * (y * (T(1) - y)); }
};

template <class T, class V>
void visit_binary_math(MathOp2 op, V&& v) {
  switch (op) {
    case MathOp2::Atan2: return v(Atan2<T>{});
    case MathOp2::Hypot: return v(Hypot<T>{});
    case MathOp2::Fmod: return v(Fmod<T>{});
    case MathOp2::Copysign: return v(Copysign<T>{});
    case MathOp2::LogAddExp: return v(LogAddExp<T>{});
    case MathOp2::LogAddExp2: return v(LogAddExp2<T>{});
    case MathOp2::Xlogy: return v(Xlogy<T>{});
    case MathOp2::GeluBackward: return v(GeluBackward<T>{});
    case MathOp2::GeluTanhBackward: return v(GeluTanhBackward<T>{});
    case MathOp2::SiluBackward: return v(SiluBackward<T>{});
    case MathOp2::TanhBackward: return v(TanhBackward<T>{});
    case MathOp2::SigmoidBackward: return v(SigmoidBackward<T>{});
  }
}

}  // namespace
}  // namespace ember::cuda::math_ops
