// float32 exp, expm1, tanh, sigmoid, log, log1p, erf and atan2 written with plain arithmetic and
// integer bit moves (no libm calls, no branches), so the compiler vectorizes
// the loops that call them; glibc's scalar expf / tanhf do not vectorize
// without -ffast-math. Accuracy (checked over all floats): exp < 1 ulp,
// expm1 and tanh < 4 ulp, log and log1p < 3 ulp, erf < 3e-7 relative, atan2 < 3 ulp; NaN, +-inf, -0 and the subnormal range behave as in
// libm. They vectorize with -fno-trapping-math (set for all of libember in
// CMakeLists.txt), which lets GCC if-convert the argument clamps.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ember::cpu::fast {

inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// 2^n for n in [-150, 128] as the product of two normal powers of two, so
// subnormal results and overflow to inf come out right.
inline float exp2i(int32_t n, float y) {
  const int32_t n1 = n >> 1;
  const int32_t n2 = n - n1;
  const float s1 = from_bits(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = from_bits(static_cast<uint32_t>(n2 + 127) << 23);
  return y * s1 * s2;
}

// x = n ln2 + r with |r| <= ln2 / 2; returns r and sets n. x must be clamped.
inline float reduce(float x, int32_t& n) {
  const float magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float t = x * 1.44269504088896341f + magic;
  n = static_cast<int32_t>(to_bits(t) - to_bits(magic));
  const float fn = t - magic;
  // ln2 split in two parts so n * ln2_hi is exact.
  return (x - fn * 0.693359375f) - fn * -2.12194440e-4f;
}

// e^r - 1 for |r| <= ln2 / 2 (a minimax polynomial, Cephes' coefficients).
inline float expm1_reduced(float r) {
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * (r * r) + r;
}

inline float clamp_exp_arg(float x) {
  // exp overflows above 88.72 and is 0 below -103.97; NaN fails both tests and stays NaN.
  return x < -104.0f ? -104.0f : (x > 88.8f ? 88.8f : x);
}

inline float exp(float x) {
  int32_t n;
  const float r = reduce(clamp_exp_arg(x), n);
  return exp2i(n, expm1_reduced(r) + 1.0f);
}

inline float expm1(float x) {
  int32_t n;
  const float r = reduce(clamp_exp_arg(x), n);
  const float q = expm1_reduced(r);
  // n == 0 keeps the polynomial's full relative accuracy near 0. The result
  // has x's sign (this also keeps expm1(-0) == -0).
  return std::copysign(n == 0 ? q : exp2i(n, q + 1.0f) - 1.0f, x);
}

inline float tanh(float x) {
  const float a = x < 0.0f ? -x : x;
  const float m = expm1(-2.0f * a);  // in (-1, 0]
  return std::copysign(-m / (m + 2.0f), x);
}

inline float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

// Natural log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log(m) by a
// polynomial in m - 1 (Cephes' logf coefficients). Subnormals are scaled up
// first; x < 0 gives NaN, 0 gives -inf, inf gives inf.
inline float log(float x) {
  const bool subnormal = x < 1.17549435e-38f;
  const float xs = subnormal ? x * 8388608.0f : x;  // 2^23
  const uint32_t bits = to_bits(xs);
  int32_t e = static_cast<int32_t>((bits >> 23) & 0xffu) - 126;
  float m = from_bits((bits & 0x007fffffu) | 0x3f000000u);  // in [0.5, 1)
  if (subnormal) e -= 23;
  const bool below = m < 0.70710678118654752f;
  e = below ? e - 1 : e;
  const float f = below ? m + m - 1.0f : m - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  const float fe = static_cast<float>(e);
  float y = p * f * z + fe * -2.12194440e-4f - 0.5f * z;
  y = (f + y) + fe * 0.693359375f;
  // Special inputs: NaN and inf pass through, 0 -> -inf, negatives -> NaN.
  const float inf = from_bits(0x7f800000u);
  y = x == 0.0f ? -inf : y;
  y = x < 0.0f ? from_bits(0x7fc00000u) : y;
  return x == inf || x != x ? x : y;
}

// log(1 + x), accurate near 0: log(u) * x / (u - 1) with u = 1 + x corrects
// the rounding of u (Goldberg's trick).
inline float log1p(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  const float r = log(u) * (x / d);
  return d == 0.0f ? x : (u == from_bits(0x7f800000u) ? u : r);
}

// erf: a Taylor polynomial below |x| = 1 (relative accuracy near 0), above
// it 1 - t p(t) e^(-x^2), t = 1 / (1 + 0.3275911 |x|) (Abramowitz & Stegun
// 7.1.26, absolute error 1.5e-7 where erf >= 0.84). Both are computed and
// one selected, which keeps the loop branch-free.
inline float erf(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  // 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1)), n = 0..10
  float s = 1.0f / 76204800.0f;
  s = s * z - 1.0f / 6894720.0f;
  s = s * z + 1.0f / 685440.0f;
  s = s * z - 1.0f / 75600.0f;
  s = s * z + 1.0f / 9360.0f;
  s = s * z - 1.0f / 1320.0f;
  s = s * z + 1.0f / 216.0f;
  s = s * z - 1.0f / 42.0f;
  s = s * z + 1.0f / 10.0f;
  s = s * z - 1.0f / 3.0f;
  s = s * z + 1.0f;
  const float small = 1.12837916709551257f * x * s;
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float large = std::copysign(1.0f - p * t * exp(-z), x);
  return a < 1.0f ? small : (a == a ? large : x);  // NaN stays NaN
}

// atan of t in [0, 1]: above tan(pi/8) it is pi/4 + atan((t - 1) / (t + 1)),
// which brings the argument within +-tan(pi/8); there Cephes' atanf polynomial.
inline float atan_unit(float t) {
  const bool high = t > 0.414213562373095f;
  const float u = high ? (t - 1.0f) / (t + 1.0f) : t;
  const float z = u * u;
  float p = 8.05374449538e-2f;
  p = p * z - 1.38776856032e-1f;
  p = p * z + 1.99777106478e-1f;
  p = p * z - 3.33329491539e-1f;
  const float r = p * z * u + u;
  return high ? r + 0.785398163397448f : r;
}

// atan2(y, x): the angle of the smaller magnitude over the larger, moved to
// its octant. libm's special cases hold: atan2(+-0, +0) = +-0, atan2(+-0, -0)
// = +-pi, infinities give the multiples of pi/4, NaN stays NaN.
inline float atan2(float y, float x) {
  const float ax = std::fabs(x), ay = std::fabs(y);
  const bool steep = ay > ax;
  const float small = steep ? ax : ay, large = steep ? ay : ax;
  const float inf = from_bits(0x7f800000u);
  float t = small / large;
  t = large == 0.0f ? 0.0f : t;                // both zero
  t = small == inf ? 1.0f : t;                 // both infinite: the diagonal
  float r = atan_unit(t);
  r = steep ? 1.5707963267948966f - r : r;
  r = std::signbit(x) ? 3.14159265358979323846f - r : r;
  r = x != x || y != y ? x + y : r;            // NaN in, NaN out
  return std::copysign(r, y);
}

}  // namespace ember::cpu::fast
