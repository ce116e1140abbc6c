// The batched, strided entry points of the CPU FFT (fft_kernel.h). The batch
// runs in blocks of Block<T>::kLanes transforms side by side in SIMD lanes
// (fft_lanes.h): a block is gathered into a contiguous buffer (lane l =
// transform l), transformed in place by the cached plan (fft_plan.h), whose
// every butterfly is then a vector operation, and scattered out. A few
// transforms left over after the last full block, and long transforms
// (whose plans run one transform as a grid of blocks, fft_grid.cpp), run one
// at a time through the same code with std::complex elements. Threads claim
// blocks one at a time (fft_parallel.h). Inverse transforms take the
// conjugates on the way in and out (F^-1(x) = conj(F(conj(x))) unscaled),
// which costs nothing extra since the copies happen anyway.
#include <ember/core/cpu/fft_kernel.h>

#include <algorithm>
#include <memory>

#include <ember/core/cpu/fft_lanes.h>
#include <ember/core/cpu/fft_plan.h>
#include <ember/core/cpu/fft_parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {

namespace {

using fft::Block;
using fft::cmul;
using fft::conjugate;
using fft::mul_neg_i;

// Each thread gets at least this much work (points times passes), or the
// batch runs on fewer threads: forking costs more.
constexpr int64_t kParallelWork = 1 << 15;

// A remainder of fewer transforms than this after the last full block runs
// one transform at a time; more fill a block whose spare lanes are zeros.
constexpr int kMinLanes = 2;

// Transforms of at least this length run one at a time when they can (see
// for_each_transform).
constexpr int64_t kAloneLength = 16384;

int64_t transform_work(int64_t n) {
  int64_t levels = 1;
  while ((int64_t{1} << levels) < n) ++levels;
  return n * levels;
}

// Calls body(b0, count, buf, work) for transforms [first, last) in groups of
// E's width (b0 the first of the group, count how many it holds), in
// parallel over groups; buf holds buf_size elements and work the plan's
// scratch, both private to the calling thread.
template <class T, class E, class Body>
void for_each_group(int64_t first, int64_t last, int64_t work_per_transform, int64_t buf_size, int64_t work_size,
                    const Body& body) {
  constexpr int W = sizeof(E) / sizeof(std::complex<T>);
  if (last <= first) return;
  const int64_t groups = (last - first + W - 1) / W;
  const int64_t grain = std::max<int64_t>(1, kParallelWork / std::max<int64_t>(work_per_transform * W, 1));
  fft::for_each_claimed(
      groups, grain, [&] { return std::unique_ptr<E[]>(new E[buf_size + work_size]); },
      [&](int64_t g, E* storage) {
        const int64_t b0 = first + g * W;
        body(b0, static_cast<int>(std::min<int64_t>(W, last - b0)), storage, storage + buf_size);
      });
}

// Runs body over the whole batch: blocks in lanes, then the remainder too
// small to fill a block one transform at a time. body is generic in the
// element type of its buffers (Block<T> or std::complex<T>).
template <class T, class Body>
void for_each_transform(int64_t batch, int64_t n, const fft::Plan<T>& plan, int64_t buf_size, const Body& body) {
  constexpr int W = Block<T>::kLanes;
  const int64_t rest = batch % W;
  int64_t blocked = rest >= kMinLanes ? batch : batch - rest;
  // Long transforms with a grid run alone: a block of them would not fit in
  // the cache, while the grid's columns and rows fill blocks anyway.
  if (plan.n >= kAloneLength && (plan.cols || (plan.sub && plan.sub->cols))) blocked = 0;
  const int64_t work_size = plan.work_size();
  const int64_t work = transform_work(n);
  for_each_group<T, Block<T>>(0, blocked, work, buf_size, work_size, body);
  for_each_group<T, std::complex<T>>(blocked, batch, work, buf_size, work_size, body);
}

void check_args(const char* what, int64_t n, int64_t batch) {
  EMBER_CHECK(n >= 1, ValueError, what, ": invalid transform length ", n);
  EMBER_CHECK(batch >= 0, ValueError, what, ": invalid batch size ", batch);
}

}  // namespace

template <class T>
void fft_c2c(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out,
             int64_t out_stride, int64_t out_dist, int64_t n, int64_t batch, bool inverse) {
  check_args("fft_c2c", n, batch);
  if (batch == 0) return;
  const auto plan = fft::complex_plan<T>(n);
  const T* src = reinterpret_cast<const T*>(in);
  T* dst = reinterpret_cast<T*>(out);
  for_each_transform<T>(batch, n, *plan, n, [&](int64_t b0, int count, auto* buf, auto* work) {
    fft::gather(buf, src + 2 * b0 * in_dist, n, 2 * in_stride, 1, 2 * in_dist, count, inverse);
    plan->forward(buf, work);
    fft::scatter(buf, dst + 2 * b0 * out_dist, n, 2 * out_stride, 1, 2 * out_dist, count, inverse);
  });
}

// Even n: z[j] = x[2j] + i x[2j+1] is transformed at length h = n/2, and
// with E, O the transforms of the even and odd samples,
//   E[k] = (Z[k] + conj(Z[h-k])) / 2,  O[k] = (Z[k] - conj(Z[h-k])) / 2i,
//   X[k] = E[k] + exp(-2πi k/n) O[k]   for k in [0, h] (Z has period h).
// Bins k and h-k need the same two values, so they are made in place in pairs.
template <class T>
void fft_r2c(const T* in, int64_t in_stride, int64_t in_dist, std::complex<T>* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch) {
  check_args("fft_r2c", n, batch);
  if (batch == 0) return;
  const auto plan = fft::real_plan<T>(n);
  const fft::Plan<T>& inner = *plan->inner;
  const int64_t bins = n / 2 + 1;
  T* dst = reinterpret_cast<T*>(out);
  if (n % 2 != 0) {  // promote to complex, keep the first half of the spectrum
    for_each_transform<T>(batch, n, inner, n, [&](int64_t b0, int count, auto* buf, auto* work) {
      fft::gather_real(buf, in + b0 * in_dist, n, in_stride, in_dist, count);
      inner.forward(buf, work);
      fft::scatter(buf, dst + 2 * b0 * out_dist, bins, 2 * out_stride, 1, 2 * out_dist, count, false);
    });
    return;
  }
  const int64_t h = n / 2;
  const std::complex<T>* tw = plan->tw.data();
  for_each_transform<T>(batch, n, inner, h + 1, [&](int64_t b0, int count, auto* z, auto* work) {
    fft::gather(z, in + b0 * in_dist, h, 2 * in_stride, in_stride, in_dist, count, false);
    inner.forward(z, work);
    z[h] = z[0];
    for (int64_t k = 0; 2 * k <= h; ++k) {
      const auto zk = z[k], zc = z[h - k];
      const auto bin = [&](auto a, auto b, int64_t t) {  // X[t] from Z[t] and Z[h-t]
        const auto b_conj = conjugate(b);
        return (a + b_conj) * T(0.5) + cmul(mul_neg_i(a - b_conj) * T(0.5), tw[t]);
      };
      z[k] = bin(zk, zc, k);
      z[h - k] = bin(zc, zk, h - k);
    }
    fft::scatter(z, dst + 2 * b0 * out_dist, bins, 2 * out_stride, 1, 2 * out_dist, count, false);
  });
}

// Even n: the inverse of fft_r2c's separation. With X[0] and X[h] taken real,
//   Z[k] = (X[k] + conj(X[h-k])) + i conj(exp(-2πi k/n)) (X[k] - conj(X[h-k]))
// is 2*DFT_h of z[j] = x[2j] + i x[2j+1]; the unscaled inverse of length h
// gives h*2*z = n*z, i.e. the unscaled inverse of length n.
template <class T>
void fft_c2r(const std::complex<T>* in, int64_t in_stride, int64_t in_dist, T* out, int64_t out_stride,
             int64_t out_dist, int64_t n, int64_t batch) {
  check_args("fft_c2r", n, batch);
  if (batch == 0) return;
  const auto plan = fft::real_plan<T>(n);
  const fft::Plan<T>& inner = *plan->inner;
  const T* src = reinterpret_cast<const T*>(in);
  const int64_t bins = n / 2 + 1;
  if (n % 2 != 0) {  // rebuild the whole Hermitian spectrum, inverse-transform it
    for_each_transform<T>(batch, n, inner, n, [&](int64_t b0, int count, auto* buf, auto* work) {
      fft::gather(buf, src + 2 * b0 * in_dist, bins, 2 * in_stride, 1, 2 * in_dist, count, false);
      fft::drop_imag(buf[0]);
      for (int64_t k = 1; k < bins; ++k) {  // buf holds conj(spectrum): inverse through forward
        buf[n - k] = buf[k];
        buf[k] = conjugate(buf[k]);
      }
      inner.forward(buf, work);
      fft::scatter_real(buf, out + b0 * out_dist, n, out_stride, out_dist, count);
    });
    return;
  }
  const int64_t h = n / 2;
  const std::complex<T>* tw = plan->tw.data();
  for_each_transform<T>(batch, n, inner, h + 1, [&](int64_t b0, int count, auto* z, auto* work) {
    fft::gather(z, src + 2 * b0 * in_dist, h + 1, 2 * in_stride, 1, 2 * in_dist, count, false);
    fft::drop_imag(z[0]);
    fft::drop_imag(z[h]);
    for (int64_t k = 0; 2 * k <= h; ++k) {
      const auto xk = z[k], xc = z[h - k];
      const auto spectrum = [&](auto a, auto b, int64_t t) {  // conj(Z[t]) from X[t] and X[h-t]
        const auto b_conj = conjugate(b);
        return conjugate((a + b_conj) + fft::mul_i(cmul(a - b_conj, std::conj(tw[t]))));
      };
      z[k] = spectrum(xk, xc, k);
      z[h - k] = spectrum(xc, xk, h - k);
    }
    inner.forward(z, work);
    // x[2j] = Re z[j], x[2j+1] = Im z[j] of the conjugated transform.
    fft::scatter(z, out + b0 * out_dist, h, 2 * out_stride, out_stride, out_dist, count, true);
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
