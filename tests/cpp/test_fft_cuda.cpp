// The cuFFT engine (cuda/fft.h) against the CPU one (core/cpu/fft_kernel.h,
// itself checked against a naive DFT in test_fft_kernel.cpp): c2c both ways,
// r2c and c2r, float and double, strided and batched layouts, lengths with
// small and large prime factors. The GPU cases return early (with a warning)
// on machines without a GPU; the CPU-only checks run everywhere.
#include <algorithm>
#include <complex>
#include <random>
#include <vector>

#include <ember/core/cpu/fft_kernel.h>
#include <ember/cuda/fft.h>

#include "cuda_util.h"
#include "util.h"

using namespace ember;
using test::have_gpu;
using test::kCuda0;

namespace {

// Host values moved to the GPU and back, through a real tensor of the same bytes.
template <class T>
Tensor to_gpu(const std::vector<T>& host) {
  using R = std::conditional_t<std::is_same_v<T, std::complex<float>> || std::is_same_v<T, float>, float, double>;
  const int64_t reals = static_cast<int64_t>(host.size() * sizeof(T) / sizeof(R));
  Tensor t = empty({reals}, dtype_of<R>::value);
  std::copy_n(reinterpret_cast<const R*>(host.data()), reals, t.data<R>());
  return t.to(kCuda0);
}

template <class T>
std::vector<T> to_host(const Tensor& gpu, size_t count) {
  using R = std::conditional_t<std::is_same_v<T, std::complex<float>> || std::is_same_v<T, float>, float, double>;
  const Tensor t = gpu.cpu();
  std::vector<T> out(count);
  std::copy_n(t.data<R>(), count * sizeof(T) / sizeof(R), reinterpret_cast<R*>(out.data()));
  return out;
}

template <class T>
double max_rel_diff(const std::vector<T>& a, const std::vector<T>& b) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, static_cast<double>(std::abs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::abs(b[i])));
  }
  return scale == 0 ? err : err / scale;
}

template <class T>
double tol() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

// batch transforms of length n, input stride 2 with a gap of 3 between
// transforms, output contiguous.
template <class T>
void compare_c2c(int64_t n, int64_t batch, bool inverse) {
  using C = std::complex<T>;
  const int64_t in_stride = 2, in_dist = 2 * n + 3;
  std::mt19937 gen(static_cast<unsigned>(n));
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<C> in(in_dist * batch);
  for (auto& v : in) v = {u(gen), u(gen)};
  std::vector<C> want(n * batch);
  cpu::fft_c2c<T>(in.data(), in_stride, in_dist, want.data(), 1, n, n, batch, inverse);
  Tensor d_in = to_gpu(in), d_out = empty({2 * n * batch}, dtype_of<T>::value, kCuda0);
  cuda::fft_c2c<T>(static_cast<const C*>(d_in.data_ptr()), in_stride, in_dist, static_cast<C*>(d_out.data_ptr()), 1,
                   n, n, batch, inverse);
  INFO("c2c n = " << n << (inverse ? " inverse" : " forward"));
  CHECK(max_rel_diff(to_host<C>(d_out, n * batch), want) <= tol<T>());
}

// r2c with bins-major output (stride batch, dist 1), then c2r of it back.
template <class T>
void compare_real(int64_t n, int64_t batch) {
  using C = std::complex<T>;
  const int64_t bins = n / 2 + 1;
  std::mt19937 gen(static_cast<unsigned>(n) + 1);
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<T> in(n * batch);
  for (auto& v : in) v = u(gen);
  std::vector<C> want_spec(bins * batch);
  cpu::fft_r2c<T>(in.data(), 1, n, want_spec.data(), batch, 1, n, batch);
  Tensor d_in = to_gpu(in), d_spec = empty({2 * bins * batch}, dtype_of<T>::value, kCuda0);
  cuda::fft_r2c<T>(static_cast<const T*>(d_in.data_ptr()), 1, n, static_cast<C*>(d_spec.data_ptr()), batch, 1, n,
                   batch);
  const std::vector<C> spec = to_host<C>(d_spec, bins * batch);
  INFO("r2c/c2r n = " << n);
  CHECK(max_rel_diff(spec, want_spec) <= tol<T>());
  std::vector<T> want_back(n * batch);
  cpu::fft_c2r<T>(want_spec.data(), batch, 1, want_back.data(), 1, n, n, batch);
  Tensor d_back = empty({n * batch}, dtype_of<T>::value, kCuda0);
  cuda::fft_c2r<T>(static_cast<const C*>(d_spec.data_ptr()), batch, 1, d_back.data<T>(), 1, n, n, batch);
  CHECK(max_rel_diff(to_host<T>(d_back, n * batch), want_back) <= tol<T>());
  CHECK(to_host<C>(d_spec, bins * batch) == spec);  // c2r left its input alone
}

}  // namespace

TEST_CASE("cuda fft: cuFFT matches the CPU engine (c2c, r2c, c2r; float and double)", "[fft][cuda]") {
  if (!have_gpu()) return;
  for (int64_t n : {1, 2, 12, 17, 64, 100, 243, 4096, 4099}) {
    compare_c2c<float>(n, 3, false);
    compare_c2c<float>(n, 3, true);
    compare_c2c<double>(n, 2, false);
    compare_c2c<double>(n, 2, true);
    compare_real<float>(n, 3);
    compare_real<double>(n, 2);
  }
}

TEST_CASE("cuda fft: in place and after the plan cache is cleared", "[fft][cuda]") {
  if (!have_gpu()) return;
  using C = std::complex<double>;
  const int64_t n = 30, batch = 4;
  std::vector<C> x(n * batch);
  for (int64_t i = 0; i < n * batch; ++i) x[i] = {double(i % 7) - 3, double(i % 5)};
  std::vector<C> want(n * batch);
  cpu::fft_c2c<double>(x.data(), 1, n, want.data(), 1, n, n, batch, false);
  for (int round = 0; round < 2; ++round) {
    Tensor d = to_gpu(x);
    C* p = static_cast<C*>(d.data_ptr());
    cuda::fft_c2c<double>(p, 1, n, p, 1, n, n, batch, false);
    CHECK(max_rel_diff(to_host<C>(d, n * batch), want) <= 1e-12);
    cuda::fft_clear_plan_cache();
  }
}

TEST_CASE("cuda fft: bad layouts are refused before reaching cuFFT", "[fft][cuda]") {
  if (!cuda::is_available()) {  // the CPU build's stand-in, or no GPU: a clear error either way
    CHECK_THROWS_AS(cuda::fft_c2c<float>(nullptr, 1, 4, nullptr, 1, 4, 4, 1, false), Error);
    return;
  }
  // Host pointers: the checks come before anything touches them.
  std::complex<float> a[16], b[16];
  CHECK_THROWS_AS(cuda::fft_c2c<float>(a, 1, 4, b, 1, 4, 0, 1, false), ValueError);
  CHECK_THROWS_AS(cuda::fft_c2c<float>(a, -1, 4, b, 1, 4, 4, 1, false), ValueError);
  CHECK_THROWS_AS(cuda::fft_c2c<float>(a, 2, 8, a, 1, 4, 4, 1, false), ValueError);
}
