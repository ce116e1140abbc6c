// Device math with one name for float and double (CUDA's float functions
// carry an f suffix), so kernels templated on T call the right precision.
#pragma once
#include <type_traits>

namespace ember::cuda::dmath {

#define EMBER_DMATH_UNARY(name, ffn, dfn)                   \
  __device__ inline float name(float x) { return ffn(x); } \
  __device__ inline double name(double x) { return dfn(x); }

EMBER_DMATH_UNARY(exp, expf, ::exp)
EMBER_DMATH_UNARY(log, logf, ::log)
EMBER_DMATH_UNARY(log1p, log1pf, ::log1p)
EMBER_DMATH_UNARY(expm1, expm1f, ::expm1)
EMBER_DMATH_UNARY(sqrt, sqrtf, ::sqrt)
EMBER_DMATH_UNARY(rsqrt, rsqrtf, ::rsqrt)
EMBER_DMATH_UNARY(sin, sinf, ::sin)
EMBER_DMATH_UNARY(cos, cosf, ::cos)
EMBER_DMATH_UNARY(tanh, tanhf, ::tanh)
EMBER_DMATH_UNARY(erf, erff, ::erf)
EMBER_DMATH_UNARY(floor, floorf, ::floor)
EMBER_DMATH_UNARY(ceil, ceilf, ::ceil)
EMBER_DMATH_UNARY(rint, rintf, ::rint)  // half to even
EMBER_DMATH_UNARY(trunc, truncf, ::trunc)
EMBER_DMATH_UNARY(fabs, fabsf, ::fabs)
#undef EMBER_DMATH_UNARY

__device__ inline float pow(float a, float b) { return powf(a, b); }
__device__ inline double pow(double a, double b) { return ::pow(a, b); }
__device__ inline float fmod(float a, float b) { return fmodf(a, b); }
__device__ inline double fmod(double a, double b) { return ::fmod(a, b); }
__device__ inline float copysign(float a, float b) { return copysignf(a, b); }
__device__ inline double copysign(double a, double b) { return ::copysign(a, b); }

template <class T>
__device__ inline bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}

}  // namespace ember::cuda::dmath
