// The butterflies of the CPU FFT's Stockham passes (internal to
// core/cpu/fft_plan.cpp). A pass of radix p reads L transforms of length
// N = p*m laid out as in[j*L + q] (element j of transform q) and writes the
// L*p transforms of length m it splits them into, in the same layout:
//   out[(j1*p + k)*L + q] = w_N^(j1 k) * sum_j2 in[(j1 + m*j2)*L + q] w_p^(j2 k)
// (decimation in frequency). After the last pass (m == 1) out is the DFT in
// natural order, so no bit reversal is needed. The q loop is innermost: it is
// contiguous in both arrays and shares one twiddle.
//
// The element type E is std::complex<T> (one transform) or Block<T> (a block
// of transforms in SIMD lanes, fft_lanes.h): the same butterflies serve both.
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>

#include <ember/core/cpu/fft_lanes.h>
#include <ember/core/cpu/fft_plan.h>

namespace ember::cpu::fft {

// Runs `butterfly(a, y)` (y = DFT_p(a), unscaled, forward) over every
// (j1, q) of a pass of compile-time radix P and stores y with its twiddles.
template <int P, class T, class E, class Butterfly>
void run_pass(const Pass<T>& pass, const E* in, E* out, const Butterfly& butterfly) {
  using C = std::complex<T>;
  const int64_t L = pass.L, m = pass.m, in_step = m * L;
  for (int64_t j1 = 0; j1 < m; ++j1) {
    const E* src = in + j1 * L;
    E* dst = out + j1 * P * L;
    const C* w = pass.tw.data() + j1 * (P - 1);
    if (j1 == 0) {  // every twiddle is 1
      for (int64_t q = 0; q < L; ++q) {
        E a[P], y[P];
        for (int j = 0; j < P; ++j) a[j] = src[j * in_step + q];
        butterfly(a, y);
        for (int k = 0; k < P; ++k) dst[k * L + q] = y[k];
      }
      continue;
    }
    for (int64_t q = 0; q < L; ++q) {
      E a[P], y[P];
      for (int j = 0; j < P; ++j) a[j] = src[j * in_step + q];
      butterfly(a, y);
      dst[q] = y[0];
      for (int k = 1; k < P; ++k) dst[k * L + q] = cmul(y[k], w[k - 1]);
    }
  }
}

// y[0..3] = DFT_4(a, b, c, d).
template <class E>
inline void dft4(const E& a, const E& b, const E& c, const E& d, E* y) {
  const E t0 = a + c, t1 = a - c;
  const E t2 = b + d, t3 = mul_neg_i(b - d);
  y[0] = t0 + t2;
  y[1] = t1 + t3;
  y[2] = t0 - t2;
  y[3] = t1 - t3;
}

template <class T, class E>
void pass2(const Pass<T>& pass, const E* in, E* out) {
  run_pass<2>(pass, in, out, [](const E* a, E* y) {
    y[0] = a[0] + a[1];
    y[1] = a[0] - a[1];
  });
}

template <class T, class E>
void pass4(const Pass<T>& pass, const E* in, E* out) {
  run_pass<4>(pass, in, out, [](const E* a, E* y) { dft4(a[0], a[1], a[2], a[3], y); });
}

// Radix 8 as two radix-4 transforms of the even and odd samples joined by
// the eighth roots: y[k] = e[k] + w^k o[k], y[k+4] = e[k] - w^k o[k].
template <class T, class E>
void pass8(const Pass<T>& pass, const E* in, E* out) {
  const T r = static_cast<T>(0.70710678118654752440);  // 1/sqrt(2)
  run_pass<8>(pass, in, out, [=](const E* a, E* y) {
    E e[4], o[4];
    dft4(a[0], a[2], a[4], a[6], e);
    dft4(a[1], a[3], a[5], a[7], o);
    // w = exp(-2πi/8): w o = (o + (-i) o) r, w^2 o = -i o, w^3 o = ((-i) o - o) r.
    const E o1 = (o[1] + mul_neg_i(o[1])) * r;
    const E o2 = mul_neg_i(o[2]);
    const E o3 = (mul_neg_i(o[3]) - o[3]) * r;
    y[0] = e[0] + o[0];
    y[4] = e[0] - o[0];
    y[1] = e[1] + o1;
    y[5] = e[1] - o1;
    y[2] = e[2] + o2;
    y[6] = e[2] - o2;
    y[3] = e[3] + o3;
    y[7] = e[3] - o3;
  });
}

template <class T, class E>
void pass3(const Pass<T>& pass, const E* in, E* out) {
  const T half_sqrt3 = static_cast<T>(0.86602540378443864676);  // sin(2π/3)
  run_pass<3>(pass, in, out, [=](const E* a, E* y) {
    const E t = a[1] + a[2];
    const E s = mul_neg_i(a[1] - a[2]) * half_sqrt3;
    const E base = a[0] - t * T(0.5);
    y[0] = a[0] + t;
    y[1] = base + s;
    y[2] = base - s;
  });
}

template <class T, class E>
void pass5(const Pass<T>& pass, const E* in, E* out) {
  // cos and sin of 2π/5 and 4π/5.
  const T c1 = static_cast<T>(0.30901699437494742410), c2 = static_cast<T>(-0.80901699437494742410);
  const T s1 = static_cast<T>(0.95105651629515357212), s2 = static_cast<T>(0.58778525229247312917);
  run_pass<5>(pass, in, out, [=](const E* a, E* y) {
    const E t1 = a[1] + a[4], t2 = a[2] + a[3];
    const E d1 = a[1] - a[4], d2 = a[2] - a[3];
    const E r1 = a[0] + t1 * c1 + t2 * c2, r2 = a[0] + t1 * c2 + t2 * c1;
    const E i1 = mul_neg_i(d1 * s1 + d2 * s2), i2 = mul_neg_i(d1 * s2 - d2 * s1);
    y[0] = a[0] + t1 + t2;
    y[1] = r1 + i1;
    y[4] = r1 - i1;
    y[2] = r2 + i2;
    y[3] = r2 - i2;
  });
}

// Any odd radix p <= kMaxRadix: pairs a[j] with a[p-j] so that each output
// pair (k, p-k) shares its cosine and sine sums (half the multiplies).
template <class T, class E>
void pass_odd(const Pass<T>& pass, const E* in, E* out) {
  using C = E;
  const int p = static_cast<int>(pass.p), h = p / 2;
  // cs[k][j], sn[k][j]: cos and sin of 2π jk/p, for j, k in [1, h].
  T cs[kMaxRadix / 2 + 1][kMaxRadix / 2 + 1], sn[kMaxRadix / 2 + 1][kMaxRadix / 2 + 1];
  for (int k = 1; k <= h; ++k) {
    for (int j = 1; j <= h; ++j) {
      const std::complex<double> r = unit_root(j * k, p);
      cs[k][j] = static_cast<T>(r.real());
      sn[k][j] = static_cast<T>(-r.imag());
    }
  }
  const int64_t L = pass.L, m = pass.m, in_step = m * L;
  for (int64_t j1 = 0; j1 < m; ++j1) {
    const C* src = in + j1 * L;
    C* dst = out + j1 * p * L;
    const std::complex<T>* w = pass.tw.data() + j1 * (p - 1);
    for (int64_t q = 0; q < L; ++q) {
      C sum[kMaxRadix], dif[kMaxRadix];  // a[j] + a[p-j], a[j] - a[p-j] for j in [1, h]
      const C a0 = src[q];
      C y0 = a0;
      for (int j = 1; j <= h; ++j) {
        const C x = src[j * in_step + q], z = src[(p - j) * in_step + q];
        sum[j] = x + z;
        dif[j] = x - z;
        y0 += sum[j];
      }
      dst[q] = y0;
      for (int k = 1; k <= h; ++k) {
        C re = a0, im{};
        for (int j = 1; j <= h; ++j) {
          re += sum[j] * cs[k][j];
          im += dif[j] * sn[k][j];
        }
        const C yk = re + mul_neg_i(im), ypk = re - mul_neg_i(im);
        dst[k * L + q] = j1 == 0 ? yk : cmul(yk, w[k - 1]);
        dst[(p - k) * L + q] = j1 == 0 ? ypk : cmul(ypk, w[p - k - 1]);
      }
    }
  }
}

}  // namespace ember::cpu::fft
