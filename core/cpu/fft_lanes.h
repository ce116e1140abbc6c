// A block of complex numbers in SIMD lanes for the CPU FFT (internal to
// core/cpu/fft_*.cpp): lane l of a Block holds one value of transform l of a
// block of kLanes transforms run side by side, real and imaginary parts in
// separate vectors (GCC/Clang vector extensions, as core/cpu/vec_lanes.h).
// The radix passes (fft_radix.h) are written once over an element type that
// is either std::complex<T> (one transform) or Block<T> (kLanes transforms):
// on blocks every butterfly add and multiply is one vector instruction with
// no shuffles, whatever the radix or length.
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>

namespace ember::cpu::fft {

template <class T>
struct LaneVec;
// 32-byte vectors: a block of 8 float or 4 double transforms of 4096 points
// and its scratch stay within a core's L2 cache.
template <>
struct LaneVec<float> {
  typedef float V __attribute__((vector_size(32)));
  static constexpr int kLanes = 8;
};
template <>
struct LaneVec<double> {
  typedef double V __attribute__((vector_size(32)));
  static constexpr int kLanes = 4;
};

template <class T>
struct Block {
  using V = typename LaneVec<T>::V;
  static constexpr int kLanes = LaneVec<T>::kLanes;
  V re, im;
};

template <class T>
inline Block<T> operator+(const Block<T>& a, const Block<T>& b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
inline Block<T> operator-(const Block<T>& a, const Block<T>& b) {
  return {a.re - b.re, a.im - b.im};
}
template <class T>
inline Block<T>& operator+=(Block<T>& a, const Block<T>& b) {
  a.re += b.re;
  a.im += b.im;
  return a;
}
template <class T>
inline Block<T> operator*(const Block<T>& a, T s) {
  return {a.re * s, a.im * s};
}

// The operations the passes need beyond + - and a real factor, for one
// complex number and for a block.

// std::complex's operator* checks for NaN/inf and may call __mulsc3; the FFT
// only wants the four multiplies.
template <class T>
inline std::complex<T> cmul(std::complex<T> a, std::complex<T> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}
// Every lane times the same complex number (a twiddle or chirp value).
template <class T>
inline Block<T> cmul(const Block<T>& a, std::complex<T> b) {
  return {a.re * b.real() - a.im * b.imag(), a.re * b.imag() + a.im * b.real()};
}

// -i * a
template <class T>
inline std::complex<T> mul_neg_i(std::complex<T> a) {
  return {a.imag(), -a.real()};
}
template <class T>
inline Block<T> mul_neg_i(const Block<T>& a) {
  return {a.im, -a.re};
}

template <class T>
inline std::complex<T> conjugate(std::complex<T> a) {
  return std::conj(a);
}
template <class T>
inline Block<T> conjugate(const Block<T>& a) {
  return {a.re, -a.im};
}

// Shuffles on lane vectors: zip_lo/zip_hi interleave the low/high halves of
// a and b (a0 b0 a1 b1 ...), evens/odds pick every other value of a then b.
template <class V>
inline V zip_lo(V a, V b) {
  if constexpr (sizeof(V) / sizeof(a[0]) == 8) return __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11);
  else return __builtin_shufflevector(a, b, 0, 4, 1, 5);
}
template <class V>
inline V zip_hi(V a, V b) {
  if constexpr (sizeof(V) / sizeof(a[0]) == 8) return __builtin_shufflevector(a, b, 4, 12, 5, 13, 6, 14, 7, 15);
  else return __builtin_shufflevector(a, b, 2, 6, 3, 7);
}
template <class V>
inline V evens(V a, V b) {
  if constexpr (sizeof(V) / sizeof(a[0]) == 8) return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
  else return __builtin_shufflevector(a, b, 0, 2, 4, 6);
}
template <class V>
inline V odds(V a, V b) {
  if constexpr (sizeof(V) / sizeof(a[0]) == 8) return __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15);
  else return __builtin_shufflevector(a, b, 1, 3, 5, 7);
}

// v[j][l] <- v[l][j] for a W x W tile (W a power of two): log2(W) rounds of
// zipping row i with row i + W/2 transpose it.
template <class V, int W>
inline void transpose(V* v) {
  for (int width = 1; width < W; width *= 2) {
    V next[W];
    for (int i = 0; i < W / 2; ++i) {
      next[2 * i] = zip_lo(v[i], v[i + W / 2]);
      next[2 * i + 1] = zip_hi(v[i], v[i + W / 2]);
    }
    for (int i = 0; i < W; ++i) v[i] = next[i];
  }
}

template <class V>
inline V load_vec(const void* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <class V>
inline void store_vec(const V& v, void* p) {
  std::memcpy(p, &v, sizeof(V));
}

// Moving a group of transforms between the callers' strided arrays of reals
// (complex arrays are passed as arrays of their parts) and a buffer. Element
// j of transform l has its real part at p[l*lane_step + j*step] and its
// imaginary part `im_offset` further; `count` transforms are moved (for a
// block, lanes at and above count read as zero and are not written), and
// `conj` negates the imaginary parts on the way. A block moves in W x W
// tiles when each transform's elements are adjacent pairs (a row of a
// contiguous complex array), and in vector loads when the transforms are
// adjacent (an inner dim), else lane by lane.
template <class T>
void gather(Block<T>* buf, const T* p, int64_t len, int64_t step, int64_t im_offset, int64_t lane_step, int count,
            bool conj) {
  using V = typename Block<T>::V;
  constexpr int W = Block<T>::kLanes;
  const T sign = conj ? T(-1) : T(1);
  int64_t j = 0;
  if (step == 2 && im_offset == 1) {
    for (; j + W <= len; j += W) {
      V re[W], im[W];
      for (int l = 0; l < W; ++l) {
        if (l < count) {
          const T* row = p + l * lane_step + 2 * j;
          const V lo = load_vec<V>(row), hi = load_vec<V>(row + W);
          re[l] = evens(lo, hi);
          im[l] = odds(lo, hi);
        } else {
          re[l] = im[l] = V{};
        }
      }
      transpose<V, W>(re);
      transpose<V, W>(im);
      for (int t = 0; t < W; ++t) buf[j + t] = {re[t], im[t] * sign};
    }
  } else if (count == W && lane_step == 2 && im_offset == 1) {
    for (; j < len; ++j) {
      const V lo = load_vec<V>(p + j * step), hi = load_vec<V>(p + j * step + W);
      buf[j] = {evens(lo, hi), odds(lo, hi) * sign};
    }
  } else if (count == W && lane_step == 1) {
    for (; j < len; ++j) buf[j] = {load_vec<V>(p + j * step), load_vec<V>(p + j * step + im_offset) * sign};
  }
  for (; j < len; ++j) {
    V re{}, im{};
    for (int l = 0; l < count; ++l) {
      re[l] = p[l * lane_step + j * step];
      im[l] = p[l * lane_step + j * step + im_offset];
    }
    buf[j] = {re, im * sign};
  }
}

template <class T>
void scatter(const Block<T>* buf, T* p, int64_t len, int64_t step, int64_t im_offset, int64_t lane_step, int count,
             bool conj) {
  using V = typename Block<T>::V;
  constexpr int W = Block<T>::kLanes;
  const T sign = conj ? T(-1) : T(1);
  int64_t j = 0;
  if (step == 2 && im_offset == 1) {
    for (; j + W <= len; j += W) {
      V re[W], im[W];
      for (int t = 0; t < W; ++t) {
        re[t] = buf[j + t].re;
        im[t] = buf[j + t].im * sign;
      }
      transpose<V, W>(re);
      transpose<V, W>(im);
      for (int l = 0; l < count; ++l) {
        T* row = p + l * lane_step + 2 * j;
        store_vec(zip_lo(re[l], im[l]), row);
        store_vec(zip_hi(re[l], im[l]), row + W);
      }
    }
  } else if (count == W && lane_step == 2 && im_offset == 1) {
    for (; j < len; ++j) {
      const V im = buf[j].im * sign;
      store_vec(zip_lo(buf[j].re, im), p + j * step);
      store_vec(zip_hi(buf[j].re, im), p + j * step + W);
    }
  } else if (count == W && lane_step == 1) {
    for (; j < len; ++j) {
      store_vec(buf[j].re, p + j * step);
      store_vec(buf[j].im * sign, p + j * step + im_offset);
    }
  }
  for (; j < len; ++j) {
    const V im = buf[j].im * sign;
    for (int l = 0; l < count; ++l) {
      p[l * lane_step + j * step] = buf[j].re[l];
      p[l * lane_step + j * step + im_offset] = im[l];
    }
  }
}

// Reals in, imaginary parts zero.
template <class T>
void gather_real(Block<T>* buf, const T* p, int64_t len, int64_t step, int64_t lane_step, int count) {
  using V = typename Block<T>::V;
  constexpr int W = Block<T>::kLanes;
  int64_t j = 0;
  if (step == 1) {
    for (; j + W <= len; j += W) {
      V re[W];
      for (int l = 0; l < W; ++l) re[l] = l < count ? load_vec<V>(p + l * lane_step + j) : V{};
      transpose<V, W>(re);
      for (int t = 0; t < W; ++t) buf[j + t] = {re[t], V{}};
    }
  } else if (count == W && lane_step == 1) {
    for (; j < len; ++j) buf[j] = {load_vec<V>(p + j * step), V{}};
  }
  for (; j < len; ++j) {
    V re{};
    for (int l = 0; l < count; ++l) re[l] = p[l * lane_step + j * step];
    buf[j] = {re, V{}};
  }
}

// Real parts out.
template <class T>
void scatter_real(const Block<T>* buf, T* p, int64_t len, int64_t step, int64_t lane_step, int count) {
  using V = typename Block<T>::V;
  constexpr int W = Block<T>::kLanes;
  int64_t j = 0;
  if (step == 1) {
    for (; j + W <= len; j += W) {
      V re[W];
      for (int t = 0; t < W; ++t) re[t] = buf[j + t].re;
      transpose<V, W>(re);
      for (int l = 0; l < count; ++l) store_vec(re[l], p + l * lane_step + j);
    }
  } else if (count == W && lane_step == 1) {
    for (; j < len; ++j) store_vec(buf[j].re, p + j * step);
  }
  for (; j < len; ++j) {
    for (int l = 0; l < count; ++l) p[l * lane_step + j * step] = buf[j].re[l];
  }
}

// The same for one transform at a time (count is 1, lane_step unused).
template <class T>
void gather(std::complex<T>* buf, const T* p, int64_t len, int64_t step, int64_t im_offset, int64_t, int,
            bool conj) {
  const T sign = conj ? T(-1) : T(1);
  for (int64_t j = 0; j < len; ++j) buf[j] = {p[j * step], p[j * step + im_offset] * sign};
}
template <class T>
void scatter(const std::complex<T>* buf, T* p, int64_t len, int64_t step, int64_t im_offset, int64_t, int,
             bool conj) {
  const T sign = conj ? T(-1) : T(1);
  for (int64_t j = 0; j < len; ++j) {
    p[j * step] = buf[j].real();
    p[j * step + im_offset] = buf[j].imag() * sign;
  }
}
template <class T>
void gather_real(std::complex<T>* buf, const T* p, int64_t len, int64_t step, int64_t, int) {
  for (int64_t j = 0; j < len; ++j) buf[j] = {p[j * step], T(0)};
}
template <class T>
void scatter_real(const std::complex<T>* buf, T* p, int64_t len, int64_t step, int64_t, int) {
  for (int64_t j = 0; j < len; ++j) p[j * step] = buf[j].real();
}

// The imaginary part of a, zeroed (bins that must be real).
template <class T>
inline void drop_imag(std::complex<T>& a) {
  a.imag(T(0));
}
template <class T>
inline void drop_imag(Block<T>& a) {
  a.im = typename Block<T>::V{};
}

// i * a
template <class T>
inline std::complex<T> mul_i(std::complex<T> a) {
  return {-a.imag(), a.real()};
}
template <class T>
inline Block<T> mul_i(const Block<T>& a) {
  return {-a.im, a.re};
}

}  // namespace ember::cpu::fft
