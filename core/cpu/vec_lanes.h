// Row reductions in explicit vector lanes (GCC/Clang vector extensions): one
// register of floats or doubles, as wide as the target's vector unit,
// loaded unaligned, reduced across lanes at the end. GCC does not vectorize
// a scalar max or sum reduction without -ffast-math, which would break NaN
// and signed-zero semantics; written with lanes, max compiles to
// vmaxps/vcmpps and sums to vaddps. The width must match the unit: GCC
// splits a vector wider than the unit into scalar code (64-byte vectors ran
// a max 2.5x slower than the plain loop on AVX2).
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__AVX512F__)
#define EMBER_VECTOR_BYTES 64
#elif defined(__AVX__)
#define EMBER_VECTOR_BYTES 32
#else
#define EMBER_VECTOR_BYTES 16
#endif

namespace ember::cpu::lanes {

template <class T>
struct Vec;
template <>
struct Vec<float> {
  typedef float V __attribute__((vector_size(EMBER_VECTOR_BYTES)));
  typedef int32_t Mask __attribute__((vector_size(EMBER_VECTOR_BYTES)));
  static constexpr int kWidth = EMBER_VECTOR_BYTES / 4;
};
template <>
struct Vec<double> {
  typedef double V __attribute__((vector_size(EMBER_VECTOR_BYTES)));
  typedef int64_t Mask __attribute__((vector_size(EMBER_VECTOR_BYTES)));
  static constexpr int kWidth = EMBER_VECTOR_BYTES / 8;
};

template <class T>
inline typename Vec<T>::V load(const T* p) {
  typename Vec<T>::V v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

template <class T>
inline typename Vec<T>::V splat(T x) {
  typename Vec<T>::V v;
  for (int l = 0; l < Vec<T>::kWidth; ++l) v[l] = x;
  return v;
}

// The largest (IsMax) or smallest of p[0, n): -inf or +inf when n == 0;
// `nan` says whether any is NaN.
template <bool IsMax, class T>
T extreme(const T* p, int64_t n, bool& nan) {
  using V = typename Vec<T>::V;
  constexpr int W = Vec<T>::kWidth;
  constexpr T kInit = IsMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  auto better = [](auto a, auto b) { return IsMax ? a > b : a < b; };
  V m = splat<T>(kInit);
  typename Vec<T>::Mask bad = {};
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const V v = load(p + i);
    m = better(v, m) ? v : m;
    bad |= (v != v);
  }
  T r = kInit;
  nan = false;
  for (int l = 0; l < W; ++l) {
    r = better(m[l], r) ? m[l] : r;
    nan = nan || bad[l] != 0;
  }
  for (; i < n; ++i) {
    r = better(p[i], r) ? p[i] : r;
    nan = nan || p[i] != p[i];
  }
  return r;
}

// The largest of p[0, n) (-inf when n == 0); `nan` says whether any is NaN.
template <class T>
T max(const T* p, int64_t n, bool& nan) {
  return extreme<true>(p, n, nan);
}

// The sum of p[0, n), W partial sums added at the end.
template <class T>
T sum(const T* p, int64_t n) {
  using V = typename Vec<T>::V;
  constexpr int W = Vec<T>::kWidth;
  V acc = splat<T>(T(0));
  int64_t i = 0;
  for (; i + W <= n; i += W) acc += load(p + i);
  T r = 0;
  for (int l = 0; l < W; ++l) r += acc[l];
  for (; i < n; ++i) r += p[i];
  return r;
}

// The sum of p[i] * q[i] over [0, n).
template <class T>
T dot(const T* p, const T* q, int64_t n) {
  using V = typename Vec<T>::V;
  constexpr int W = Vec<T>::kWidth;
  V acc = splat<T>(T(0));
  int64_t i = 0;
  for (; i + W <= n; i += W) acc += load(p + i) * load(q + i);
  T r = 0;
  for (int l = 0; l < W; ++l) r += acc[l];
  for (; i < n; ++i) r += p[i] * q[i];
  return r;
}

// The sum of (p[i] - mean)^2 over [0, n).
template <class T>
T sum_sq_dev(const T* p, int64_t n, T mean) {
  using V = typename Vec<T>::V;
  constexpr int W = Vec<T>::kWidth;
  const V mv = splat<T>(mean);
  V acc = splat<T>(T(0));
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const V d = load(p + i) - mv;
    acc += d * d;
  }
  T r = 0;
  for (int l = 0; l < W; ++l) r += acc[l];
  for (; i < n; ++i) r += (p[i] - mean) * (p[i] - mean);
  return r;
}

}  // namespace ember::cpu::lanes
