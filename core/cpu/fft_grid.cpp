// One long transform as an n1 x n2 matrix (the four-step FFT; fft_plan.h's
// Plan::cols/rows): a single transform has no neighbours to fill SIMD lanes
// with, but its columns and rows do. With x[j1 n2 + j2] and w = exp(-2πi/n),
//   X[k1 + n1 k2] = sum_j2 w_n2^(j2 k2) [w^(j2 k1) sum_j1 x[j1 n2 + j2] w_n1^(j1 k1)],
// so the n2 columns are transformed (adjacent in memory: vector loads), their
// outputs multiplied by the grid of twiddles, and the n1 rows transformed and
// written to X with stride n1 (adjacent again). Both steps run in blocks of
// Block<T>::kLanes transforms and spread over threads when not nested.
#include <algorithm>
#include <memory>

#include <ember/core/cpu/fft_lanes.h>
#include <ember/core/cpu/fft_plan.h>
#include <ember/core/cpu/fft_parallel.h>

namespace ember::cpu::fft {

namespace {

// Lengths below this run one transform through the passes directly.
constexpr int64_t kMinGrid = 2048;

// Blocks per thread chunk: the columns or rows of a grid are few and long.
constexpr int64_t kGridGrain = 4;

// Runs body(first, count, buf, work) over `count` transforms of `plan` in
// blocks, with per-thread buffers.
template <class T, class Body>
void for_each_block(int64_t transforms, const Plan<T>& plan, const Body& body) {
  constexpr int W = Block<T>::kLanes;
  const int64_t blocks = (transforms + W - 1) / W;
  fft::for_each_claimed(
      blocks, kGridGrain, [&] { return std::unique_ptr<Block<T>[]>(new Block<T>[plan.n + plan.work_size()]); },
      [&](int64_t b, Block<T>* storage) {
        const int64_t first = b * W;
        body(first, static_cast<int>(std::min<int64_t>(W, transforms - first)), storage, storage + plan.n);
      });
}

}  // namespace

template <class T>
void add_grid(Plan<T>& plan) {
  constexpr int64_t W = Block<T>::kLanes;
  const int64_t n = plan.n;
  if (n < kMinGrid) return;
  // The most square split with both sides multiples of W.
  int64_t n1 = 0;
  for (int64_t d = W; d * d <= n; d += W) {
    if (n % d == 0 && (n / d) % W == 0) n1 = d;
  }
  if (n1 == 0) return;
  const int64_t n2 = n / n1;
  plan.pitch = n2 + W;
  plan.cols = complex_plan<T>(n1);
  plan.rows = complex_plan<T>(n2);
  plan.grid_re.resize(n);
  plan.grid_im.resize(n);
  for (int64_t k1 = 0; k1 < n1; ++k1) {
    for (int64_t j2 = 0; j2 < n2; ++j2) {
      const std::complex<double> w = unit_root(k1 * j2, n);  // k1*j2 < n: no reduction needed
      plan.grid_re[k1 * n2 + j2] = static_cast<T>(w.real());
      plan.grid_im[k1 * n2 + j2] = static_cast<T>(w.imag());
    }
  }
}

template <class T>
void grid_forward(const Plan<T>& plan, std::complex<T>* data, std::complex<T>* work) {
  using V = typename Block<T>::V;
  const Plan<T>& cols = *plan.cols;
  const Plan<T>& rows = *plan.rows;
  const int64_t n1 = cols.n, n2 = rows.n;
  const int64_t pitch = plan.pitch;
  T* x = reinterpret_cast<T*>(data);
  T* m = reinterpret_cast<T*>(work);
  // The matrix into scratch, row by row, then its columns j2..j2+W-1
  // (element j1 at m[j1 pitch + j2]) transformed and twiddled in place.
  for (int64_t j1 = 0; j1 < n1; ++j1) std::copy(data + j1 * n2, data + (j1 + 1) * n2, work + j1 * pitch);
  for_each_block<T>(n2, cols, [&](int64_t j2, int count, Block<T>* buf, Block<T>* scratch) {
    gather(buf, m + 2 * j2, n1, 2 * pitch, 1, 2, count, false);
    cols.forward(buf, scratch);
    for (int64_t k1 = 1; k1 < n1; ++k1) {  // row 0 of the grid is all ones
      const T* wr = plan.grid_re.data() + k1 * n2 + j2;
      const T* wi = plan.grid_im.data() + k1 * n2 + j2;
      V re, im;
      if (count == Block<T>::kLanes) {
        re = load_vec<V>(wr);
        im = load_vec<V>(wi);
      } else {
        re = im = V{};
        for (int l = 0; l < count; ++l) re[l] = wr[l], im[l] = wi[l];
      }
      const Block<T> a = buf[k1];
      buf[k1] = {a.re * re - a.im * im, a.re * im + a.im * re};
    }
    scatter(buf, m + 2 * j2, n1, 2 * pitch, 1, 2, count, false);
  });
  // Rows k1..k1+W-1 of the matrix: element k2 goes to X[k1 + n1 k2].
  for_each_block<T>(n1, rows, [&](int64_t k1, int count, Block<T>* buf, Block<T>* scratch) {
    gather(buf, m + 2 * k1 * pitch, n2, 2, 1, 2 * pitch, count, false);
    rows.forward(buf, scratch);
    scatter(buf, x + 2 * k1, n2, 2 * n1, 1, 2, count, false);
  });
}

template void add_grid<float>(Plan<float>&);
template void add_grid<double>(Plan<double>&);
template void grid_forward<float>(const Plan<float>&, std::complex<float>*, std::complex<float>*);
template void grid_forward<double>(const Plan<double>&, std::complex<double>*, std::complex<double>*);

}  // namespace ember::cpu::fft
