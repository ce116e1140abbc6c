// Special functions that neither the C++ library nor CUDA provides, shared by
// the CPU kernels and the CUDA ones (core/host_device.h). Computed in double:
// float inputs convert on the way in and out.
#pragma once
#include <cmath>

#include <ember/core/host_device.h>

namespace ember::special {

// The digamma function psi(x) = d/dx log(Gamma(x)), as PyTorch defines it:
// -inf at 0 (+inf at -0), NaN at the negative integers. Negative x is
// reflected, small x shifted up by the recurrence psi(x + 1) = psi(x) + 1/x,
// and the asymptotic series finishes from x >= 10 (|error| < 1e-15 there).
EMBER_HOST_DEVICE inline double digamma(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x == 0) return ::copysign(INFINITY, -x);
  if (x != x) return x;
  double result = 0;
  if (x < 0) {
    if (x == ::floor(x)) return NAN;
    // psi(1 - x) - psi(x) = pi / tan(pi x)
    result -= kPi / ::tan(kPi * x);
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  const double inv2 = 1 / (x * x);
  // sum over k of B(2k) / (2k x^2k): 1/12, -1/120, 1/252, -1/240, 1/132
  const double series =
      inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 * (1.0 / 132)))));
  return result + ::log(x) - 0.5 / x - series;
}

// The trigamma function psi'(x) for x > 0: the recurrence
// psi'(x) = psi'(x + 1) + 1/x^2 up to x >= 10, then the asymptotic series
// 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7) - 1/(30x^9) + 5/(66x^11).
EMBER_HOST_DEVICE inline double trigamma_positive(double x) {
  double result = 0;
  while (x < 10) {
    result += 1 / (x * x);
    x += 1;
  }
  const double inv = 1 / x, inv2 = inv * inv;
  const double tail = 1.0 / 6 - inv2 * (1.0 / 30 - inv2 * (1.0 / 42 - inv2 * (1.0 / 30 - inv2 * 5.0 / 66)));
  return result + inv + inv2 / 2 + inv * inv2 * tail;
}

// psi'(x) everywhere: +inf at the poles (0 and the negative integers);
// negative x by the reflection psi'(x) + psi'(1 - x) = pi^2 / sin^2(pi x).
EMBER_HOST_DEVICE inline double trigamma(double x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x != x || x == -INFINITY) return NAN;  // -inf: no limit (as PyTorch)
  if (x > 0) return trigamma_positive(x);
  if (x == ::floor(x)) return INFINITY;
  const double s = ::sin(kPi * x);
  return kPi * kPi / (s * s) - trigamma_positive(1 - x);
}

// The inverse error function: erf(erfinv(y)) = y for y in (-1, 1), +-inf at
// +-1, NaN outside. A central rational start (|y| <= 0.7) or a tail one, then
// two Newton steps on erf(x) - y, which bring it to double precision.
EMBER_HOST_DEVICE inline double erfinv(double y) {
  constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
  if (y != y || y < -1 || y > 1) return NAN;
  if (y == 1) return INFINITY;
  if (y == -1) return -INFINITY;
  double x;
  const double a = y < 0 ? -y : y;
  if (a <= 0.7) {
    const double z = y * y;
    x = y * (((-0.140543331 * z + 0.914624893) * z - 1.645349621) * z + 0.886226899) /
        ((((0.012229801 * z - 0.329097515) * z + 1.442710462) * z - 2.118377725) * z + 1);
  } else {
    const double z = ::sqrt(-::log((1 - a) / 2));
    x = (((1.641345311 * z + 3.429567803) * z - 1.624906493) * z - 1.970840454) /
        ((1.637067800 * z + 3.543889200) * z + 1);
    if (y < 0) x = -x;
  }
  for (int i = 0; i < 2; ++i) x -= (::erf(x) - y) / (kTwoOverSqrtPi * ::exp(-x * x));
  return x;
}

}  // namespace ember::special
