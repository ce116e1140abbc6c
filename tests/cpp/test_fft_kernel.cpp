// The CPU FFT engine (core/cpu/fft_kernel.h) against a naive O(n²) DFT in
// long double: every radix pass, the generic odd radix, Bluestein, forward
// and inverse, float and double, strided/batched/in-place layouts, the real
// transforms at odd and even n, the plan cache, and concurrent first use.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include <ember/core/cpu/fft_kernel.h>
#include <ember/core/cpu/fft_plan.h>
#include <ember/core/error.h>

#include "catch.h"

using ember::cpu::fft_c2c;
using ember::cpu::fft_c2r;
using ember::cpu::fft_r2c;
using LD = std::complex<long double>;

namespace {

// Small and large lengths, powers of 2 and 4, every odd radix, primes above
// the largest radix (Bluestein), and mixes of them.
const std::vector<int64_t> kLengths = {1,  2,  3,  4,   5,   6,   7,   8,   9,    11,   12,   13,  16,
                                       17, 30, 49, 64,  77,  97,  100, 128, 143,  243,  256,  510, 1000,
                                       1024, 2048, 4099};

// Random values that float holds exactly, so one reference serves both precisions.
std::vector<std::complex<double>> random_complex(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::complex<double>> x(n);
  for (auto& v : x) v = {u(gen), u(gen)};
  return x;
}

// sum_j x[j] exp(∓2πi jk/n) in long double, from a table of the n roots.
std::vector<LD> naive_dft(const std::vector<std::complex<double>>& x, bool inverse) {
  const int64_t n = static_cast<int64_t>(x.size());
  const long double pi = 3.141592653589793238462643383279502884L;
  std::vector<LD> roots(n), out(n);
  for (int64_t t = 0; t < n; ++t) {
    const long double a = (inverse ? 2 : -2) * pi * t / n;
    roots[t] = {std::cos(a), std::sin(a)};
  }
  for (int64_t k = 0; k < n; ++k) {
    LD s = 0;
    for (int64_t j = 0; j < n; ++j) s += LD(x[j].real(), x[j].imag()) * roots[(j * k) % n];
    out[k] = s;
  }
  return out;
}

// max_k |got[k] - want[k]| / max_k |want[k]|.
template <class T>
double rel_error(const std::vector<std::complex<T>>& got, const std::vector<LD>& want) {
  long double err = 0, scale = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    err = std::max(err, std::abs(LD(got[k].real(), got[k].imag()) - want[k]));
    scale = std::max(scale, std::abs(want[k]));
  }
  return static_cast<double>(scale == 0 ? err : err / scale);
}

// The accuracy an O(n log n) transform should reach: eps per level of its
// recursion, and one more.
template <class T>
double tolerance(int64_t n) {
  return std::numeric_limits<T>::epsilon() * (1 + std::log2(static_cast<double>(n)));
}

template <class T>
std::vector<std::complex<T>> narrow(const std::vector<std::complex<double>>& x) {
  std::vector<std::complex<T>> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = {static_cast<T>(x[i].real()), static_cast<T>(x[i].imag())};
  return out;
}

template <class T>
void check_lengths(bool inverse) {
  for (int64_t n : kLengths) {
    const auto x = random_complex(n, static_cast<unsigned>(n));
    const auto want = naive_dft(x, inverse);
    const auto in = narrow<T>(x);
    std::vector<std::complex<T>> out(n);
    fft_c2c<T>(in.data(), 1, n, out.data(), 1, n, n, 1, inverse);
    INFO("n = " << n << (inverse ? " inverse" : " forward"));
    CHECK(rel_error(out, want) <= tolerance<T>(n));
  }
}

}  // namespace

TEST_CASE("fft_c2c matches the naive DFT at every length, forward and inverse", "[fft]") {
  check_lengths<float>(false);
  check_lengths<float>(true);
  check_lengths<double>(false);
  check_lengths<double>(true);
}

namespace {

// `batch` transforms of length n with element stride 3 and a gap between
// transforms on the way in, stride 2 and reversed transform order on the way
// out; the elements between the strided ones must stay untouched.
template <class T>
void check_strided(int64_t n, int64_t batch, bool inverse) {
  using C = std::complex<T>;
  const int64_t in_stride = 3, in_dist = in_stride * n + 5;
  const int64_t out_stride = 2, out_dist = -(out_stride * n + 1);
  const auto x = random_complex(in_dist * batch, 7);
  const auto in = narrow<T>(x);
  const C sentinel(T(1234.5), T(-6789.25));
  std::vector<C> out(-out_dist * batch, sentinel);
  C* out_first = out.data() + (-out_dist) * (batch - 1);  // transform 0 is written last in memory
  fft_c2c<T>(in.data(), in_stride, in_dist, out_first, out_stride, out_dist, n, batch, inverse);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<std::complex<double>> xb(n);
    for (int64_t j = 0; j < n; ++j) xb[j] = x[b * in_dist + j * in_stride];
    const auto want = naive_dft(xb, inverse);
    std::vector<C> got(n);
    for (int64_t k = 0; k < n; ++k) got[k] = out_first[b * out_dist + k * out_stride];
    INFO("n = " << n << " batch item " << b);
    CHECK(rel_error(got, want) <= tolerance<T>(n));
  }
  int64_t untouched = 0;
  for (const C& v : out) untouched += v == sentinel;
  CHECK(untouched == static_cast<int64_t>(out.size()) - n * batch);
}

}  // namespace

TEST_CASE("fft_c2c: strided, batched, reversed and in-place layouts", "[fft]") {
  for (int64_t n : {1, 6, 17, 64, 100}) {
    check_strided<float>(n, 4, false);
    check_strided<double>(n, 3, true);
  }
  // In place: each transform overwrites its own input.
  const int64_t n = 60, batch = 3;
  const auto x = random_complex(n * batch, 11);
  auto data = narrow<double>(x);
  fft_c2c<double>(data.data(), 1, n, data.data(), 1, n, n, batch, false);
  for (int64_t b = 0; b < batch; ++b) {
    const auto want = naive_dft({x.begin() + b * n, x.begin() + (b + 1) * n}, false);
    CHECK(rel_error(std::vector<std::complex<double>>(data.begin() + b * n, data.begin() + (b + 1) * n), want) <=
          tolerance<double>(n));
  }
}

TEST_CASE("fft_c2c: a batch big enough to run on several threads equals its transforms one by one", "[fft]") {
  // The batch runs in SIMD blocks on several threads, a single transform
  // alone: the two differ by rounding only.
  for (int64_t n : {256, 97, 30}) {
    const int64_t batch = 300;
    const auto in = narrow<float>(random_complex(n * batch, 3));
    std::vector<std::complex<float>> all(n * batch), one(n);
    fft_c2c<float>(in.data(), 1, n, all.data(), 1, n, n, batch, false);
    double worst = 0;
    for (int64_t b = 0; b < batch; ++b) {
      fft_c2c<float>(in.data() + b * n, 1, n, one.data(), 1, n, n, 1, false);
      const std::vector<std::complex<float>> got(all.begin() + b * n, all.begin() + (b + 1) * n);
      worst = std::max(worst, rel_error(got, std::vector<LD>(one.begin(), one.end())));
    }
    INFO("n = " << n);
    CHECK(worst <= tolerance<float>(n));
  }
}

TEST_CASE("fft_c2c: inverse of forward is n times the input", "[fft]") {
  for (int64_t n : {5, 48, 97, 1000}) {
    const auto x = narrow<double>(random_complex(n, 5));
    std::vector<std::complex<double>> f(n), back(n);
    fft_c2c<double>(x.data(), 1, n, f.data(), 1, n, n, 1, false);
    fft_c2c<double>(f.data(), 1, n, back.data(), 1, n, n, 1, true);
    double err = 0;
    for (int64_t j = 0; j < n; ++j) err = std::max(err, std::abs(back[j] / static_cast<double>(n) - x[j]));
    INFO("n = " << n);
    CHECK(err <= tolerance<double>(n) * 2);
  }
}

namespace {

template <class T>
void check_real(int64_t n) {
  using C = std::complex<T>;
  const int64_t bins = n / 2 + 1, batch = 3, in_stride = 2, in_dist = 2 * n + 1;
  std::vector<std::complex<double>> x = random_complex(in_dist * batch, 13);
  for (auto& v : x) v = v.real();
  std::vector<T> in(x.size());
  for (size_t i = 0; i < x.size(); ++i) in[i] = static_cast<T>(x[i].real());
  // rfft: strided input, bins-major output (stride batch, dist 1).
  std::vector<C> spec(bins * batch);
  fft_r2c<T>(in.data(), in_stride, in_dist, spec.data(), batch, 1, n, batch);
  std::vector<T> back(n * batch);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<std::complex<double>> xb(n);
    for (int64_t j = 0; j < n; ++j) xb[j] = x[b * in_dist + j * in_stride];
    auto want = naive_dft(xb, false);
    want.resize(bins);
    std::vector<C> got(bins);
    for (int64_t k = 0; k < bins; ++k) got[k] = spec[k * batch + b];
    INFO("rfft n = " << n << " batch item " << b);
    CHECK(rel_error(got, want) <= tolerance<T>(n));
  }
  // irfft of the rfft: n times the input. Nonzero imaginary parts in the
  // bins that must be real are ignored (as numpy and PyTorch do).
  for (int64_t b = 0; b < batch; ++b) {
    spec[b] += C(0, T(0.75));
    if (n % 2 == 0) spec[(bins - 1) * batch + b] += C(0, T(-0.5));
  }
  fft_c2r<T>(spec.data(), batch, 1, back.data(), 1, n, n, batch);
  double err = 0, scale = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < n; ++j) {
      const double want = x[b * in_dist + j * in_stride].real();
      err = std::max(err, std::abs(back[b * n + j] / static_cast<double>(n) - want));
      scale = std::max(scale, std::abs(want));
    }
  }
  INFO("irfft n = " << n);
  CHECK(err / scale <= 2 * tolerance<T>(n));
}

}  // namespace

TEST_CASE("fft_r2c and fft_c2r: naive DFT and round trips at odd and even n", "[fft]") {
  for (int64_t n : {1, 2, 3, 4, 5, 6, 7, 10, 16, 17, 34, 97, 100, 128, 243, 1000, 1024}) {
    check_real<float>(n);
    check_real<double>(n);
  }
}

TEST_CASE("fft_c2r: matches the naive inverse DFT of the Hermitian spectrum", "[fft]") {
  for (int64_t n : {1, 2, 7, 8, 30, 97}) {
    const int64_t bins = n / 2 + 1;
    auto half = random_complex(bins, 17);
    half[0] = half[0].real();
    if (n % 2 == 0) half[bins - 1] = half[bins - 1].real();
    std::vector<std::complex<double>> full(n);
    for (int64_t k = 0; k < n; ++k) full[k] = k < bins ? half[k] : std::conj(half[n - k]);
    const auto want = naive_dft(full, true);
    std::vector<double> got(n);
    fft_c2r<double>(half.data(), 1, bins, got.data(), 1, n, n, 1);
    std::vector<std::complex<double>> got_c(got.begin(), got.end());
    INFO("n = " << n);
    CHECK(rel_error(got_c, want) <= tolerance<double>(n));
  }
}

TEST_CASE("fft plans are cached per length and built safely by concurrent first users", "[fft]") {
  using ember::cpu::fft::complex_plan;
  CHECK(complex_plan<float>(360) == complex_plan<float>(360));
  CHECK(complex_plan<double>(4099) == complex_plan<double>(4099));
  CHECK(complex_plan<double>(4099)->sub != nullptr);  // Bluestein above the largest radix
  CHECK(complex_plan<double>(4096)->sub == nullptr);
  // Lengths no other test uses, so the threads race to build them.
  const std::vector<int64_t> lengths = {1031, 2310, 3 * 1031};
  std::vector<std::vector<std::complex<double>>> results(8);
  const auto x = narrow<double>(random_complex(3 * 1031, 23));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int64_t n : lengths) {
        std::vector<std::complex<double>> out(n);
        fft_c2c<double>(x.data(), 1, n, out.data(), 1, n, n, 1, false);
        results[t].insert(results[t].end(), out.begin(), out.end());
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<std::complex<double>> first;
  for (int64_t n : lengths) {
    std::vector<std::complex<double>> out(n);
    fft_c2c<double>(x.data(), 1, n, out.data(), 1, n, n, 1, false);
    first.insert(first.end(), out.begin(), out.end());
  }
  for (const auto& r : results) CHECK(r == first);
  const auto want = naive_dft({x.begin(), x.begin() + 1031}, false);
  CHECK(rel_error(std::vector<std::complex<double>>(first.begin(), first.begin() + 1031), want) <=
        tolerance<double>(1031));
}

TEST_CASE("fft kernels reject a length below 1 and accept an empty batch", "[fft]") {
  std::vector<std::complex<float>> buf(4);
  std::vector<float> real(4);
  CHECK_THROWS_AS(fft_c2c<float>(buf.data(), 1, 1, buf.data(), 1, 1, 0, 1, false), ember::ValueError);
  CHECK_THROWS_AS(fft_r2c<float>(real.data(), 1, 1, buf.data(), 1, 1, -2, 1), ember::ValueError);
  CHECK_THROWS_AS(fft_c2r<float>(buf.data(), 1, 1, real.data(), 1, 1, 0, 1), ember::ValueError);
  CHECK_NOTHROW(fft_c2c<float>(nullptr, 1, 4, nullptr, 1, 4, 4, 0, true));
}

TEST_CASE("fft_c2c at large lengths: float against double, and a double round trip", "[fft]") {
  // Too long for the naive DFT: the double engine (checked above) is the
  // reference for float, and the inverse for double.
  for (int64_t n : {65536, 65537, 3 * 5 * 7 * 11 * 13 * 4}) {
    const auto x = random_complex(n, 29);
    const auto xf = narrow<float>(x);
    std::vector<std::complex<float>> yf(n);
    std::vector<std::complex<double>> yd(n), back(n);
    fft_c2c<float>(xf.data(), 1, n, yf.data(), 1, n, n, 1, false);
    fft_c2c<double>(x.data(), 1, n, yd.data(), 1, n, n, 1, false);
    std::vector<LD> want(yd.begin(), yd.end());
    INFO("n = " << n);
    CHECK(rel_error(yf, want) <= tolerance<float>(n));
    fft_c2c<double>(yd.data(), 1, n, back.data(), 1, n, n, 1, true);
    double err = 0;
    for (int64_t j = 0; j < n; ++j) err = std::max(err, std::abs(back[j] / static_cast<double>(n) - x[j]));
    CHECK(err <= 2 * tolerance<double>(n));
  }
}

namespace {

// A layout of `batch` transforms of length n in one array: element j of
// transform b at j*stride + b*dist (+ offset, so that negative dists work).
struct Layout {
  int64_t stride, dist;
  int64_t offset(int64_t n, int64_t batch) const {
    return (dist < 0 ? -dist * (batch - 1) : 0) + (stride < 0 ? -stride * (n - 1) : 0);
  }
  int64_t size(int64_t n, int64_t batch) const {
    return std::abs(stride) * (n - 1) + std::abs(dist) * (batch - 1) + 1;
  }
  int64_t at(int64_t n, int64_t batch, int64_t b, int64_t j) const { return offset(n, batch) + b * dist + j * stride; }
};

// The layouts the front-end uses and the engine moves in its own ways: rows
// (stride 1: W x W tiles), rows with a gap and in reverse order, adjacent
// interleaved transforms (dist 1: an inner dim, vector loads), and a strided
// mix (lane by lane).
std::vector<Layout> layouts(int64_t n, int64_t batch) {
  return {{1, n}, {1, -(n + 3)}, {batch, 1}, {2 * batch + 1, 2}};
}

// fft_c2c on `batch` transforms of length n in each layout, in place and out
// of place, against the naive DFT of each transform; elements of the output
// array outside the layout must stay untouched.
template <class T>
void check_blocks_c2c(int64_t n, int64_t batch, bool inverse) {
  using C = std::complex<T>;
  const C sentinel(T(1234.5), T(-6789.25));
  for (const Layout& lay : layouts(n, batch)) {
    const int64_t size = lay.size(n, batch);
    const auto x = random_complex(size, static_cast<unsigned>(n * 131 + batch));
    std::vector<std::vector<LD>> want(batch);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<std::complex<double>> xb(n);
      for (int64_t j = 0; j < n; ++j) xb[j] = x[lay.at(n, batch, b, j)];
      want[b] = naive_dft(xb, inverse);
    }
    for (bool in_place : {false, true}) {
      std::vector<C> in = narrow<T>(x), out(size, sentinel);
      std::vector<C>& dst = in_place ? in : out;
      const int64_t off = lay.offset(n, batch);
      fft_c2c<T>(in.data() + off, lay.stride, lay.dist, dst.data() + off, lay.stride, lay.dist, n, batch, inverse);
      std::vector<bool> inside(size, false);
      double worst = 0;
      for (int64_t b = 0; b < batch; ++b) {
        std::vector<C> got(n);
        for (int64_t k = 0; k < n; ++k) {
          got[k] = dst[lay.at(n, batch, b, k)];
          inside[lay.at(n, batch, b, k)] = true;
        }
        worst = std::max(worst, rel_error(got, want[b]));
      }
      int64_t touched = 0;
      if (!in_place) {
        for (int64_t i = 0; i < size; ++i) touched += !inside[i] && out[i] != sentinel;
      }
      INFO("n = " << n << " batch " << batch << " stride " << lay.stride << " dist " << lay.dist
                  << (in_place ? " in place" : "") << (inverse ? " inverse" : ""));
      CHECK(worst <= tolerance<T>(n));
      CHECK(touched == 0);
    }
  }
}

// fft_r2c and fft_c2r with the same layouts for the reals and the bins.
template <class T>
void check_blocks_real(int64_t n, int64_t batch) {
  using C = std::complex<T>;
  const int64_t bins = n / 2 + 1;
  for (size_t li = 0; li < 4; ++li) {
    const Layout rl = layouts(n, batch)[li], bl = layouts(bins, batch)[li];
    const int64_t rsize = rl.size(n, batch), bsize = bl.size(bins, batch);
    INFO("n = " << n << " batch " << batch << " layout " << li);
    // rfft against the first bins of the naive DFT.
    const auto x = random_complex(rsize, static_cast<unsigned>(n * 7 + batch));
    std::vector<T> xr(rsize);
    for (int64_t i = 0; i < rsize; ++i) xr[i] = static_cast<T>(x[i].real());
    std::vector<C> spec(bsize);
    fft_r2c<T>(xr.data() + rl.offset(n, batch), rl.stride, rl.dist, spec.data() + bl.offset(bins, batch), bl.stride,
               bl.dist, n, batch);
    double worst = 0;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<std::complex<double>> xb(n);
      for (int64_t j = 0; j < n; ++j) xb[j] = xr[rl.at(n, batch, b, j)];
      auto want = naive_dft(xb, false);
      want.resize(bins);
      std::vector<C> got(bins);
      for (int64_t k = 0; k < bins; ++k) got[k] = spec[bl.at(bins, batch, b, k)];
      worst = std::max(worst, rel_error(got, want));
    }
    CHECK(worst <= tolerance<T>(n));
    // irfft against the naive inverse of a random Hermitian spectrum.
    const auto h = random_complex(bsize, static_cast<unsigned>(n * 11 + batch));
    const std::vector<C> half = narrow<T>(h);
    std::vector<T> back(rsize);
    fft_c2r<T>(half.data() + bl.offset(bins, batch), bl.stride, bl.dist, back.data() + rl.offset(n, batch), rl.stride,
               rl.dist, n, batch);
    worst = 0;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<std::complex<double>> full(n);
      for (int64_t k = 0; k < n; ++k) {
        std::complex<double> v = h[bl.at(bins, batch, b, k < bins ? k : n - k)];
        if (k == 0 || 2 * k == n) v = v.real();
        full[k] = k < bins ? v : std::conj(v);
      }
      const auto want = naive_dft(full, true);
      std::vector<std::complex<T>> got(n);
      for (int64_t j = 0; j < n; ++j) got[j] = back[rl.at(n, batch, b, j)];
      worst = std::max(worst, rel_error(got, want));
    }
    CHECK(worst <= tolerance<T>(n));
  }
}

// Batches that fill whole blocks (8 float or 4 double transforms), leave one
// transform over (run alone), or leave a few (a block with spare lanes).
const std::vector<int64_t> kBatches = {1, 2, 3, 4, 5, 8, 9, 10, 17};

}  // namespace

TEST_CASE("fft_c2c in SIMD blocks: every layout, in place, batches on and off the block size", "[fft]") {
  for (int64_t n : {1, 2, 3, 5, 8, 12, 13, 16, 24, 64, 97, 100}) {
    for (int64_t batch : kBatches) {
      check_blocks_c2c<float>(n, batch, false);
      check_blocks_c2c<double>(n, batch, true);
    }
  }
}

TEST_CASE("fft_r2c and fft_c2r in SIMD blocks: odd, even and prime n in every layout", "[fft]") {
  for (int64_t n : {1, 2, 3, 4, 6, 7, 10, 16, 17, 26, 34, 64, 100}) {
    for (int64_t batch : kBatches) {
      check_blocks_real<float>(n, batch);
      check_blocks_real<double>(n, batch);
    }
  }
}

TEST_CASE("fft_c2c in SIMD blocks at a Bluestein length, float against the double engine", "[fft]") {
  const int64_t n = 4099, batch = 11;
  const auto x = random_complex(n * batch, 31);
  const auto xf = narrow<float>(x);
  std::vector<std::complex<float>> yf(n * batch);
  fft_c2c<float>(xf.data(), batch, 1, yf.data(), batch, 1, n, batch, false);  // interleaved: vector loads
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<std::complex<double>> xb(n), yd(n);
    for (int64_t j = 0; j < n; ++j) xb[j] = x[j * batch + b];
    fft_c2c<double>(xb.data(), 1, n, yd.data(), 1, n, n, 1, false);
    std::vector<std::complex<float>> got(n);
    for (int64_t k = 0; k < n; ++k) got[k] = yf[k * batch + b];
    INFO("batch item " << b);
    CHECK(rel_error(got, std::vector<LD>(yd.begin(), yd.end())) <= tolerance<float>(n));
  }
}

TEST_CASE("fft_c2c: single long transforms run as a grid of SIMD blocks (four-step)", "[fft]") {
  using ember::cpu::fft::complex_plan;
  // 2048 and 6144 split for both precisions; 2400 only for double (float's
  // blocks of 8 need 64 | n), 4099 through Bluestein's grid of 16384.
  CHECK(complex_plan<float>(2048)->cols != nullptr);
  CHECK(complex_plan<double>(2400)->cols != nullptr);
  CHECK(complex_plan<float>(2400)->cols == nullptr);
  CHECK(complex_plan<float>(4099)->sub->cols != nullptr);
  for (int64_t n : {2048, 2400, 6144}) {
    for (bool inverse : {false, true}) {
      // A strided single transform, and a batch of 9 whose last one runs alone.
      const auto x = random_complex(9 * n, static_cast<unsigned>(n));
      const auto want = naive_dft({x.begin(), x.begin() + n}, inverse);
      std::vector<std::complex<double>> strided(2 * n);
      for (int64_t j = 0; j < n; ++j) strided[2 * j] = x[j];
      std::vector<std::complex<double>> yd(n);
      fft_c2c<double>(strided.data(), 2, 2 * n, yd.data(), 1, n, n, 1, inverse);
      const auto xf = narrow<float>(x);
      std::vector<std::complex<float>> yf(9 * n);
      fft_c2c<float>(xf.data(), 1, n, yf.data(), 1, n, n, 9, inverse);
      const auto last = naive_dft({x.begin() + 8 * n, x.end()}, inverse);
      INFO("n = " << n << (inverse ? " inverse" : ""));
      CHECK(rel_error(yd, want) <= tolerance<double>(n));
      CHECK(rel_error(std::vector<std::complex<float>>(yf.begin(), yf.begin() + n), want) <= tolerance<float>(n));
      CHECK(rel_error(std::vector<std::complex<float>>(yf.begin() + 8 * n, yf.end()), last) <= tolerance<float>(n));
    }
  }
}

TEST_CASE("fft batches of long transforms run one at a time through their grids", "[fft]") {
  // n >= 16384 with a grid (or Bluestein's grid): each transform of the batch
  // alone, in an interleaved layout, against double transforms one by one.
  for (int64_t n : {16384, 20011}) {
    const int64_t batch = 3;
    const auto x = random_complex(n * batch, 37);
    const auto xf = narrow<float>(x);
    std::vector<std::complex<float>> yf(n * batch);
    fft_c2c<float>(xf.data(), batch, 1, yf.data(), batch, 1, n, batch, true);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<std::complex<double>> xb(n), yd(n);
      for (int64_t j = 0; j < n; ++j) xb[j] = x[j * batch + b];
      fft_c2c<double>(xb.data(), 1, n, yd.data(), 1, n, n, 1, true);
      std::vector<std::complex<float>> got(n);
      for (int64_t k = 0; k < n; ++k) got[k] = yf[k * batch + b];
      INFO("n = " << n << " batch item " << b);
      CHECK(rel_error(got, std::vector<LD>(yd.begin(), yd.end())) <= tolerance<float>(n));
    }
  }
  // Real transforms of 32768 points: the half-length complex plan has a grid.
  const int64_t n = 32768, bins = n / 2 + 1, batch = 2;
  const auto x = random_complex(n * batch, 41);
  std::vector<float> xr(n * batch);
  for (int64_t i = 0; i < n * batch; ++i) xr[i] = static_cast<float>(x[i].real());
  std::vector<std::complex<float>> spec(bins * batch);
  std::vector<float> back(n * batch);
  fft_r2c<float>(xr.data(), 1, n, spec.data(), 1, bins, n, batch);
  fft_c2r<float>(spec.data(), 1, bins, back.data(), 1, n, n, batch);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<std::complex<double>> xb(n), yd(n);
    for (int64_t j = 0; j < n; ++j) xb[j] = xr[b * n + j];
    fft_c2c<double>(xb.data(), 1, n, yd.data(), 1, n, n, 1, false);
    std::vector<std::complex<float>> got(spec.begin() + b * bins, spec.begin() + (b + 1) * bins);
    INFO("real batch item " << b);
    CHECK(rel_error(got, std::vector<LD>(yd.begin(), yd.begin() + bins)) <= tolerance<float>(n));
    double err = 0;
    for (int64_t j = 0; j < n; ++j) err = std::max(err, std::abs(back[b * n + j] / double(n) - xb[j].real()));
    CHECK(err <= 2 * tolerance<float>(n));
  }
}
