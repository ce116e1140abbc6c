// Plans of the CPU FFT (internal to core/cpu/fft_*.cpp): what can be computed
// once per length and reused by every transform of that length, i.e. the
// factorization, the twiddle tables and, for lengths with a large prime
// factor, Bluestein's chirp and the transformed convolution kernel. Plans are
// immutable once built and shared through a small thread-safe cache, so stft
// frames and training steps pay for them once.
#pragma once
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include <ember/core/cpu/fft_lanes.h>

namespace ember::cpu::fft {

// Prime factors up to this size run as radix passes; a larger one makes the
// whole length go through Bluestein (a power-of-two FFT), keeping O(n log n).
constexpr int64_t kMaxRadix = 13;

// One Stockham pass of radix p: L transforms of length p*m are split into
// L*p transforms of length m. tw[j1*(p-1) + k-1] = exp(-2πi L j1 k / n).
template <class T>
struct Pass {
  int64_t p = 0, m = 0, L = 0;
  std::vector<std::complex<T>> tw;
};

// A forward (exp(-2πi jk/n)) complex transform of one length. Inverse
// transforms reuse it through conj(F(conj(x))), folded into the callers'
// copies in and out, so only forward butterflies exist.
template <class T>
struct Plan {
  int64_t n = 0;
  std::vector<Pass<T>> passes;  // empty for Bluestein plans (and n == 1)

  // Bluestein: X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k-j]), c[t] = exp(-πi t²/n),
  // the sum a circular convolution of length `big` (a power of two >= 2n-1).
  int64_t big = 0;
  std::shared_ptr<const Plan<T>> sub;  // the power-of-two plan of length big
  std::vector<std::complex<T>> chirp;   // c[0..n)
  std::vector<std::complex<T>> kernel;  // F(conj(c) wrapped to length big) / big

  // Long lengths also split n = n1 * n2 for one transform at a time (the
  // passes serve blocks): the n points as an n1 x n2 matrix, its columns
  // transformed in SIMD blocks (length n1), multiplied by w^(k1 j2) with
  // w = exp(-2πi/n), its rows transformed in blocks (length n2) and read out
  // transposed: X[k1 + n1 k2] (the "four-step" FFT; fft_grid.cpp).
  // The matrix is worked on in scratch with rows `pitch` apart, a little
  // more than n2: walking down a column then touches distinct cache sets
  // (n2 is often a power of two).
  std::shared_ptr<const Plan<T>> cols, rows;  // lengths n1, n2; null if unsplit
  std::vector<T> grid_re, grid_im;            // w^(k1 j2) at k1*n2 + j2
  int64_t pitch = 0;

  // Elements of scratch that forward() needs next to its data.
  int64_t work_size() const {
    if (sub) return big + sub->work_size();
    return cols ? cols->n * pitch : n;
  }

  // data[0..n) = F(data[0..n)) in place; work holds work_size() elements.
  // E is std::complex<T> (one transform) or Block<T> (a block of transforms
  // in SIMD lanes, fft_lanes.h).
  template <class E>
  void forward(E* data, E* work) const;
};

// The n1 x n2 split of a plan with `cols` (fft_grid.cpp): adds it to a plan
// of length n when n is long and has a split with both sides multiples of
// the SIMD block width, and runs it.
template <class T>
void add_grid(Plan<T>& plan);
template <class T>
void grid_forward(const Plan<T>& plan, std::complex<T>* data, std::complex<T>* work);

// Real transforms of length n. Even n: the n reals are packed as n/2 complex
// numbers (even samples real, odd ones imaginary) and run through the plan of
// n/2, and `tw` = exp(-2πi k/n), k in [0, n/2], separates the two halves.
// Odd n: the reals are promoted to complex and run through the plan of n.
template <class T>
struct RealPlan {
  int64_t n = 0;
  std::shared_ptr<const Plan<T>> inner;
  std::vector<std::complex<T>> tw;  // even n only
};

// Cached plans (built on first use, shared afterwards).
template <class T>
std::shared_ptr<const Plan<T>> complex_plan(int64_t n);
template <class T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n);

// exp(-2πi t / n), computed in long double so that float and double tables
// are correctly rounded (to well under an ulp).
std::complex<double> unit_root(int64_t t, int64_t n);

}  // namespace ember::cpu::fft
