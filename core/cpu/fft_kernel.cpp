// The batched, strided entry points of the CPU FFT (fft_kernel.h): each
// transform is copied into a contiguous buffer, transformed in place by its
// cached plan (fft_plan.h) and copied out. Inverse transforms take the
// conjugates on the way in and out (F^-1(x) = conj(F(conj(x))) unscaled),
// which costs nothing extra since the copies happen anyway.
#include <ember/core/cpu/fft_kernel.h>

#include <algorithm>
#include <vector>

#include <ember/core/cpu/fft_plan.h>
#include <ember/core/cpu/fft_radix.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {

namespace {

using fft::cmul;

// Below this many points a batch runs on one thread: forking costs more.
constexpr int64_t kParallelPoints = 16384;

// Calls f(b, buf, work) for every transform b of the batch, in parallel over
// the batch; buf holds buf_size elements and work the plan's scratch, both
// private to the calling thread.
template <class T, class F>
void for_each_transform(int64_t batch, int64_t points, int64_t buf_size, int64_t work_size, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kParallelPoints / std::max<int64_t>(points, 1));
  parallel_for(0, batch, grain, [&](int64_t begin, int64_t end) {
    std::vector<std::complex<T>> storage(buf_size + work_size);
    for (int64_t b = begin; b < end; ++b) f(b, storage.data(), storage.data() + buf_size);
  });
}

void check_args(const char* what, int64_t n, int64_t batch) {
  EMBER_CHECK(n >= 1, ValueError, what, ": invalid transform length ", n);
  EMBER_CHECK(batch >= 0, ValueError, what, ": invalid batch size ", batch);
}

}  // namespace

template <class T>
void fft_c2c(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out,
             int64_t out_stride, int64_t out_dist, int64_t n, int64_t batch, bool inverse) {
  using C = std::complex<T>;
  check_args("fft_c2c", n, batch);
  if (batch == 0) return;
  const auto plan = fft::complex_plan<T>(n);
  for_each_transform<T>(batch, n, n, plan->work_size(), [&](int64_t b, C* buf, C* work) {
    const C* src = in + b * in_dist;
    C* dst = out + b * out_dist;
    if (inverse) {
      for (int64_t j = 0; j < n; ++j) buf[j] = std::conj(src[j * in_stride]);
    } else {
      for (int64_t j = 0; j < n; ++j) buf[j] = src[j * in_stride];
    }
    plan->forward(buf, work);
    if (inverse) {
      for (int64_t k = 0; k < n; ++k) dst[k * out_stride] = std::conj(buf[k]);
    } else {
      for (int64_t k = 0; k < n; ++k) dst[k * out_stride] = buf[k];
    }
  });
}

// Even n: z[j] = x[2j] + i x[2j+1] is transformed at length h = n/2, and
// with E, O the transforms of the even and odd samples,
//   E[k] = (Z[k] + conj(Z[h-k])) / 2,  O[k] = (Z[k] - conj(Z[h-k])) / 2i,
//   X[k] = E[k] + exp(-2πi k/n) O[k]   for k in [0, h] (Z has period h).
template <class T>
void fft_r2c(const T* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch) {
  using C = std::complex<T>;
  check_args("fft_r2c", n, batch);
  if (batch == 0) return;
  const auto plan = fft::real_plan<T>(n);
  const fft::Plan<T>& inner = *plan->inner;
  const int64_t bins = n / 2 + 1;
  if (n % 2 != 0) {  // promote to complex, keep the first half of the spectrum
    for_each_transform<T>(batch, n, n, inner.work_size(), [&](int64_t b, C* buf, C* work) {
      const T* src = in + b * in_dist;
      for (int64_t j = 0; j < n; ++j) buf[j] = C(src[j * in_stride], T(0));
      inner.forward(buf, work);
      C* dst = out + b * out_dist;
      for (int64_t k = 0; k < bins; ++k) dst[k * out_stride] = buf[k];
    });
    return;
  }
  const int64_t h = n / 2;
  const C* tw = plan->tw.data();
  for_each_transform<T>(batch, n, h, inner.work_size(), [&](int64_t b, C* z, C* work) {
    const T* src = in + b * in_dist;
    for (int64_t j = 0; j < h; ++j) z[j] = C(src[2 * j * in_stride], src[(2 * j + 1) * in_stride]);
    inner.forward(z, work);
    C* dst = out + b * out_dist;
    for (int64_t k = 0; k <= h; ++k) {
      const C zk = z[k == h ? 0 : k], zc = std::conj(z[k == 0 ? 0 : h - k]);
      const C even = (zk + zc) * T(0.5);
      const C odd = fft::mul_neg_i(zk - zc) * T(0.5);
      dst[k * out_stride] = even + cmul(tw[k], odd);
    }
  });
}

// Even n: the inverse of fft_r2c's separation. With X[0] and X[h] taken real,
//   Z[k] = (X[k] + conj(X[h-k])) + i conj(exp(-2πi k/n)) (X[k] - conj(X[h-k]))
// is 2*DFT_h of z[j] = x[2j] + i x[2j+1]; the unscaled inverse of length h
// gives h*2*z = n*z, i.e. the unscaled inverse of length n.
template <class T>
void fft_c2r(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, T* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch) {
  using C = std::complex<T>;
  check_args("fft_c2r", n, batch);
  if (batch == 0) return;
  const auto plan = fft::real_plan<T>(n);
  const fft::Plan<T>& inner = *plan->inner;
  if (n % 2 != 0) {  // rebuild the whole Hermitian spectrum, inverse-transform it
    const int64_t half = (n - 1) / 2;
    for_each_transform<T>(batch, n, n, inner.work_size(), [&](int64_t b, C* buf, C* work) {
      const C* src = in + b * in_dist;
      buf[0] = C(src[0].real(), T(0));
      for (int64_t k = 1; k <= half; ++k) {  // buf holds conj(spectrum)
        buf[k] = std::conj(src[k * in_stride]);
        buf[n - k] = src[k * in_stride];
      }
      inner.forward(buf, work);
      T* dst = out + b * out_dist;
      for (int64_t j = 0; j < n; ++j) dst[j * out_stride] = buf[j].real();
    });
    return;
  }
  const int64_t h = n / 2;
  const C* tw = plan->tw.data();
  for_each_transform<T>(batch, n, h, inner.work_size(), [&](int64_t b, C* z, C* work) {
    const C* src = in + b * in_dist;
    auto bin = [&](int64_t k) {
      return k == 0 || k == h ? C(src[k * in_stride].real(), T(0)) : src[k * in_stride];
    };
    for (int64_t k = 0; k < h; ++k) {
      const C xk = bin(k), xc = std::conj(bin(h - k));
      const C odd = cmul(xk - xc, std::conj(tw[k]));
      z[k] = std::conj((xk + xc) + C(-odd.imag(), odd.real()));  // conj: inverse via forward
    }
    inner.forward(z, work);
    T* dst = out + b * out_dist;
    for (int64_t j = 0; j < h; ++j) {
      dst[2 * j * out_stride] = z[j].real();
      dst[(2 * j + 1) * out_stride] = -z[j].imag();
    }
  });
}

template void fft_c2c<float>(const std::complex<float>*, int64_t, int64_t, std::complex<float>*, int64_t, int64_t,
                             int64_t, int64_t, bool);
template void fft_c2c<double>(const std::complex<double>*, int64_t, int64_t, std::complex<double>*, int64_t,
                              int64_t, int64_t, int64_t, bool);
template void fft_r2c<float>(const float*, int64_t, int64_t, std::complex<float>*, int64_t, int64_t, int64_t,
                             int64_t);
template void fft_r2c<double>(const double*, int64_t, int64_t, std::complex<double>*, int64_t, int64_t, int64_t,
                              int64_t);
template void fft_c2r<float>(const std::complex<float>*, int64_t, int64_t, float*, int64_t, int64_t, int64_t,
                             int64_t);
template void fft_c2r<double>(const std::complex<double>*, int64_t, int64_t, double*, int64_t, int64_t, int64_t,
                              int64_t);

}  // namespace ember::cpu
