// The fused row kernels run on the CPU through tests/cpp/cuda_emulation.h,
// on the same inputs as ember's CPU kernels: softmax / log_softmax
// (cuda/device/softmax_kernels.cuh), layer_norm / rms_norm forward and
// backward (cuda/device/norm_kernels.cuh), cross_entropy forward and backward
// and nll_loss (cuda/device/loss_kernels.cuh), batch norm's per-channel
// kernels (cuda/device/norm_kernels.cuh), whole or split across blocks. Rows shorter and longer than
// the block, odd sizes, strided (inner > 1) layouts, fewer blocks than
// columns (grid-stride loops), -inf / NaN, float32, float64, and float16 /
// bfloat16 read and written by the kernels (rounded to nearest even).
#include <ember/core/cpu/loss.h>
#include <ember/core/cpu/norm.h>
#include <ember/core/cpu/softmax.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/loss_kernels.cuh>
#include <ember/cuda/device/norm_kernels.cuh>
#include <ember/cuda/device/softmax_kernels.cuh>

namespace {

using namespace emu_test;
using ember::cuda::Acc;

template <class T> struct Of;
template <> struct Of<float> { static constexpr DType dtype = DType::Float32; };
template <> struct Of<double> { static constexpr DType dtype = DType::Float64; };
template <> struct Of<__half> { static constexpr DType dtype = DType::Float16; };
template <> struct Of<__nv_bfloat16> { static constexpr DType dtype = DType::BFloat16; };

// ---- softmax

template <class T>
void softmax_case(int64_t outer, int64_t n, int64_t inner, bool log, std::vector<std::pair<int64_t, double>> specials) {
  INFO("softmax outer " << outer << " n " << n << " inner " << inner << " log " << log << " dtype "
                        << ember::dtype_name(Of<T>::dtype));
  const Shape shape{outer, n, inner};
  std::vector<double> v = normal_values(static_cast<size_t>(outer * n * inner), 3.0, static_cast<unsigned>(n + inner));
  for (auto [i, x] : specials) v[static_cast<size_t>(i)] = x;
  const Tensor x = tensor_of(v, shape, Of<T>::dtype);
  Tensor want = nan_tensor(shape, Of<T>::dtype), got = nan_tensor(shape, Of<T>::dtype);
  ember::cpu::softmax(want, x, outer, n, inner, log);
  const int64_t columns = outer * inner;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(columns, 3));  // grid-stride over the columns
  launch(grid, ember::cuda::kSoftmaxThreads, 0, [&] {
    if (log) ember::cuda::softmax_kernel<T, true>(ptr<T>(x), ptr<T>(got), columns, n, inner);
    else ember::cuda::softmax_kernel<T, false>(ptr<T>(x), ptr<T>(got), columns, n, inner);
  });
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  require_close(values_of(got), values_of(want), tol, tol, "softmax");
}

// ---- layer_norm / rms_norm

template <class T>
void row_norm_case(int64_t rows, int64_t cols, bool rms, bool affine, double xscale = 1.0, double shift = 0.0) {
  using A = typename Acc<T>::type;
  const DType dt = Of<T>::dtype, at = std::is_same_v<A, double> ? DType::Float64 : DType::Float32;
  INFO("row_norm rows " << rows << " cols " << cols << " rms " << rms << " affine " << affine << " dtype "
                        << ember::dtype_name(dt));
  std::vector<double> xv = normal_values(static_cast<size_t>(rows * cols), xscale, static_cast<unsigned>(cols));
  for (double& e : xv) e += shift;
  const Tensor x = tensor_of(xv, {rows, cols}, dt);
  const Tensor xa = x.to(at);  // the CPU kernel computes half types in float32
  const Tensor w = affine ? tensor_of(normal_values(cols, 1.0, 11), {cols}, at) : Tensor();
  const Tensor b = affine ? tensor_of(normal_values(cols, 1.0, 12), {cols}, at) : Tensor();
  Tensor want = nan_tensor({rows, cols}, at), want_mean = rms ? Tensor() : nan_tensor({rows}, at),
         want_rstd = nan_tensor({rows}, at);
  const double eps = 1e-5;
  ember::cpu::row_norm(want, want_mean, want_rstd, xa, w, b, rows, cols, eps, rms);
  Tensor got = nan_tensor({rows, cols}, dt), mean = rms ? Tensor() : nan_tensor({rows}, at), rstd = nan_tensor({rows}, at);
  launch(static_cast<unsigned>(rows), ember::cuda::row_norm_threads(cols), 0, [&] {
    ember::cuda::row_norm_kernel<T>(ptr<T>(got), ptr<A>(mean), ptr<A>(rstd), ptr<T>(x), ptr<A>(w), ptr<A>(b), cols, eps,
                                    rms);
  });
  const bool half = sizeof(T) == 2;
  const double tol = half ? 1e-2 : std::is_same_v<T, float> ? 2e-5 : 1e-12;
  // The kernel sums in float32 (the CPU in double), so its float32 mean may
  // be one ulp of the shift from the CPU's, which moves every output by up to
  // an ulp of the shift over the spread (a one-pass variance would be off by
  // far more).
  const double mean_ulp = std::is_same_v<A, float> ? std::fabs(shift) * 1.2e-7 : 0.0;
  const double out_tol = tol + mean_ulp / xscale;
  // Half outputs: the CPU's float32 result rounded once more.
  require_close(values_of(got), values_of(half ? want.to(dt) : want), out_tol, out_tol, "out");
  require_close(values_of(rstd), values_of(want_rstd), half ? 1e-5 : tol, half ? 1e-5 : tol, "rstd");
  if (!rms) require_close(values_of(mean), values_of(want_mean), half ? 1e-5 : tol, (half ? 1e-5 : tol) + mean_ulp, "mean");

  // Backward from the forward's statistics, against a float64 reference:
  // gx = rstd * (g w - mean(g w) - xhat * mean(g w xhat)) (no mean(g w) for rms),
  // gw = sum_rows g * xhat, gb = sum_rows g.
  const Tensor g = tensor_of(normal_values(static_cast<size_t>(rows * cols), 1.0, 99), {rows, cols}, dt);
  Tensor gx = nan_tensor({rows, cols}, dt), gw = nan_tensor({cols}, at), gb = nan_tensor({cols}, at);
  launch(static_cast<unsigned>(rows), ember::cuda::row_norm_threads(cols), 0, [&] {
    ember::cuda::row_norm_backward_kernel<T>(ptr<T>(gx), ptr<T>(g), ptr<T>(x), ptr<A>(mean), ptr<A>(rstd), ptr<A>(w), cols);
  });
  // One chunk of all rows, one block: the column tiles grid-stride (the
  // chunked plans: test_norm_grads_emulation.cpp).
  launch(dim3(1, 1), dim3(ember::cuda::kParamTileCols, ember::cuda::kParamRowLanes), 0, [&] {
    ember::cuda::row_norm_param_grads_kernel<T>(ptr<A>(gw), ptr<A>(gb), ptr<T>(g), ptr<T>(x), ptr<A>(mean), ptr<A>(rstd),
                                                rows, cols, rows);
  });
  const std::vector<double> X = values_of(x), G = values_of(g), M = rms ? std::vector<double>(rows, 0.0) : values_of(mean),
                            R = values_of(rstd), W = affine ? values_of(w) : std::vector<double>(cols, 1.0);
  std::vector<double> rgx(rows * cols), rgw(cols, 0.0), rgb(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double sg = 0, sgx = 0;
    for (int64_t j = 0; j < cols; ++j) {
      const double gwj = G[r * cols + j] * W[j], xh = (X[r * cols + j] - M[r]) * R[r];
      sg += gwj, sgx += gwj * xh;
      rgw[j] += G[r * cols + j] * xh;
      rgb[j] += G[r * cols + j];
    }
    for (int64_t j = 0; j < cols; ++j) {
      const double gwj = G[r * cols + j] * W[j], xh = (X[r * cols + j] - M[r]) * R[r];
      rgx[r * cols + j] = R[r] * (gwj - (rms ? 0.0 : sg / cols) - xh * sgx / cols);
    }
  }
  const double gtol = half ? 2e-2 : std::is_same_v<T, float> ? 1e-4 : 1e-10;
  require_close(values_of(gx), rgx, gtol, gtol, "gx");
  require_close(values_of(gw), rgw, gtol, gtol * std::sqrt(static_cast<double>(rows)), "gw");
  require_close(values_of(gb), rgb, gtol, gtol * std::sqrt(static_cast<double>(rows)), "gb");
}

// ---- cross_entropy / nll_loss

template <class T>
void cross_entropy_case(int64_t outer, int64_t classes, int64_t inner, bool weighted, int64_t ignore_index,
                        std::vector<std::pair<int64_t, double>> specials = {}) {
  using A = typename Acc<T>::type;
  const DType dt = Of<T>::dtype, at = std::is_same_v<A, double> ? DType::Float64 : DType::Float32;
  INFO("cross_entropy outer " << outer << " classes " << classes << " inner " << inner << " weighted " << weighted
                              << " ignore " << ignore_index << " dtype " << ember::dtype_name(dt));
  const int64_t positions = outer * inner;
  std::vector<double> xv = normal_values(static_cast<size_t>(outer * classes * inner), 2.0, static_cast<unsigned>(classes));
  for (auto [i, v] : specials) xv[static_cast<size_t>(i)] = v;
  const Tensor x = tensor_of(xv, {outer, classes, inner}, dt), xa = x.to(at);
  std::vector<double> tv(static_cast<size_t>(positions));
  for (int64_t p = 0; p < positions; ++p) tv[p] = p % 5 == 3 && ignore_index >= 0 ? ignore_index : (p * 7 + 3) % classes;
  if (ignore_index < 0 && positions > 2) tv[2] = ignore_index;
  const Tensor target = tensor_of(tv, {positions}, DType::Int64);
  const Tensor weight = weighted ? tensor_of(normal_values(classes, 1.0, 5), {classes}, at).abs() : Tensor();
  Tensor loss = nan_tensor({positions}, at), wt = nan_tensor({positions}, at), lse = nan_tensor({positions}, at);
  Tensor want_loss = nan_tensor({positions}, at), want_wt = nan_tensor({positions}, at), want_lse = nan_tensor({positions}, at);
  ember::cpu::cross_entropy_forward(want_loss, want_wt, want_lse, xa, target, weight, ignore_index, outer, classes, inner);
  launch(static_cast<unsigned>(positions), ember::cuda::kLossThreads, 0, [&] {
    ember::cuda::ce_forward_kernel<T, A>(ptr<A>(loss), ptr<A>(wt), ptr<A>(lse), ptr<T>(x), ptr<int64_t>(target),
                                         ptr<A>(weight), ignore_index, classes, inner);
  });
  const double tol = std::is_same_v<A, float> ? 2e-5 : 1e-12;
  require_close(values_of(loss), values_of(want_loss), tol, tol, "loss");
  require_close(values_of(wt), values_of(want_wt), 0, 0, "wt");
  require_close(values_of(lse), values_of(want_lse), tol, tol, "lse");

  const Tensor gl = tensor_of(normal_values(positions, 1.0, 3), {positions}, at);
  Tensor gx = nan_tensor({outer, classes, inner}, at), want_gx = nan_tensor({outer, classes, inner}, at);
  ember::cpu::cross_entropy_backward(want_gx, gl, want_wt, want_lse, xa, target, ignore_index, outer, classes, inner);
  launch(static_cast<unsigned>(positions), ember::cuda::kLossThreads, 0, [&] {
    ember::cuda::ce_backward_kernel<T, A>(ptr<A>(gx), ptr<A>(gl), ptr<A>(want_wt), ptr<A>(want_lse), ptr<T>(x),
                                          ptr<int64_t>(target), ignore_index, classes, inner);
  });
  require_close(values_of(gx), values_of(want_gx), tol, tol, "gx");
  if constexpr (!std::is_same_v<T, A>) {  // written in x's 16-bit type: the float result, rounded once
    Tensor gx16 = nan_tensor({outer, classes, inner}, dt);
    launch(static_cast<unsigned>(positions), ember::cuda::kLossThreads, 0, [&] {
      ember::cuda::ce_backward_kernel<T, A, T>(ptr<T>(gx16), ptr<A>(gl), ptr<A>(want_wt), ptr<A>(want_lse), ptr<T>(x),
                                               ptr<int64_t>(target), ignore_index, classes, inner);
    });
    require_close(values_of(gx16), values_of(gx.to(dt)), 0, 0, "gx in the input dtype");
  }

  // nll_loss on the same input: loss = -wt * x_t; gx zero but at the target.
  Tensor nl = nan_tensor({positions}, at), nwt = nan_tensor({positions}, at);
  launch(2, 32, 0, [&] {  // fewer threads than positions: grid-stride
    ember::cuda::nll_forward_kernel<T, A>(ptr<A>(nl), ptr<A>(nwt), ptr<T>(x), ptr<int64_t>(target), ptr<A>(weight),
                                          ignore_index, classes, inner, positions);
  });
  Tensor ngx = tensor_of(std::vector<double>(static_cast<size_t>(outer * classes * inner), 0.0), {outer, classes, inner}, at);
  launch(2, 32, 0, [&] {
    ember::cuda::nll_backward_kernel<A>(ptr<A>(ngx), ptr<A>(gl), ptr<A>(nwt), ptr<int64_t>(target), ignore_index, classes,
                                        inner, positions);
  });
  const std::vector<double> X = values_of(x), WT = values_of(want_wt), GL = values_of(gl);
  std::vector<double> rl(positions), rgx(static_cast<size_t>(outer * classes * inner), 0.0);
  for (int64_t p = 0; p < positions; ++p) {
    const int64_t t = static_cast<int64_t>(tv[p]);
    if (t == ignore_index) { rl[p] = 0; continue; }
    const int64_t k = (p / inner) * classes * inner + t * inner + p % inner;
    rl[p] = WT[p] == 0 ? 0.0 : -WT[p] * X[k];
    rgx[k] = -GL[p] * WT[p];
  }
  require_close(values_of(nwt), WT, 0, 0, "nll wt");
  require_close(values_of(nl), rl, tol, tol, "nll loss");
  require_close(values_of(ngx), rgx, tol, tol, "nll gx");
}

// ---- batch norm's per-channel kernels

// cuda/norm.cu's channel_sums: one pass, or split chunks and a second pass,
// as channel_splits decides for `sm_count` SMs.
template <class T, ember::cuda::ChannelSum kWhat>
int64_t run_channel_sums(T* a, T* b, const Tensor& x, const T* g, const T* mean, const T* rstd, int64_t n, int64_t c,
                         int64_t inner, T divisor, int sm_count) {
  const int64_t count = n * inner;
  const int64_t splits = ember::cuda::channel_splits(c, count, sm_count);
  const int64_t chunk = splits > 1 ? (count + splits - 1) / splits : count;
  const dim3 grid(static_cast<unsigned>(c), static_cast<unsigned>(splits));
  if (splits == 1) {
    launch(grid, ember::cuda::kChannelThreads, 0, [&] {
      ember::cuda::channel_sums_kernel<T, kWhat>(a, b, ptr<T>(x), g, mean, rstd, n, c, inner, chunk, divisor);
    });
    return splits;
  }
  Tensor part = nan_tensor({2, c, splits}, x.dtype());
  T* pa = ptr<T>(part);
  T* pb = b ? pa + c * splits : nullptr;
  launch(grid, ember::cuda::kChannelThreads, 0, [&] {
    ember::cuda::channel_sums_kernel<T, kWhat>(pa, pb, ptr<T>(x), g, mean, rstd, n, c, inner, chunk, T(1));
  });
  launch(1, 32, 0, [&] {  // fewer threads than channels, sometimes: grid-stride
    ember::cuda::channel_finish_kernel<T>(a, b, pa, pb, c, splits, divisor);
  });
  return splits;
}

template <class T>
void batch_norm_case(int64_t n, int64_t c, int64_t inner, bool affine, bool batch_stats, int sm_count = 132,
                     int64_t want_splits = -1) {
  using ember::cuda::ChannelSum;
  const DType dt = Of<T>::dtype;
  const int64_t splits = ember::cuda::channel_splits(c, n * inner, sm_count);
  INFO("batch_norm n " << n << " c " << c << " inner " << inner << " affine " << affine << " batch_stats "
                       << batch_stats << " " << ember::dtype_name(dt) << " sms " << sm_count << ": " << splits
                       << " splits");
  if (want_splits >= 0) REQUIRE(splits == want_splits);  // the case exercises the path it means to
  const Shape shape{n, c, inner};
  const int64_t total = n * c * inner;
  const Tensor x = tensor_of(normal_values(static_cast<size_t>(total), 2.0, 21), shape, dt);
  const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  Tensor mean = nan_tensor({c}, dt), var = nan_tensor({c}, dt), want_mean = nan_tensor({c}, dt), want_var = nan_tensor({c}, dt);
  ember::cpu::channel_moments(want_mean, want_var, x, n, c, inner);
  const T count = static_cast<T>(n * inner);
  run_channel_sums<T, ChannelSum::kX>(ptr<T>(mean), nullptr, x, nullptr, nullptr, nullptr, n, c, inner, count, sm_count);
  run_channel_sums<T, ChannelSum::kSquaredDeviation>(ptr<T>(var), nullptr, x, nullptr, ptr<T>(mean), nullptr, n, c,
                                                     inner, count, sm_count);
  require_close(values_of(mean), values_of(want_mean), tol, tol, "mean");
  require_close(values_of(var), values_of(want_var), tol, tol, "var");

  const Tensor scale = tensor_of(normal_values(c, 1.0, 22), {c}, dt), shift = tensor_of(normal_values(c, 1.0, 23), {c}, dt);
  Tensor out = nan_tensor(shape, dt), want_out = nan_tensor(shape, dt);
  ember::cpu::channel_affine(want_out, x, scale, shift, n, c, inner);
  for (unsigned blocks : {1u, 3u, 7u}) {  // fewer threads than elements: grid-stride, steps across planes and channels
    launch(blocks, 64, 0, [&] {
      ember::cuda::channel_affine_kernel<T>(ptr<T>(out), ptr<T>(x), ptr<T>(scale), ptr<T>(shift), c, inner, total);
    });
    require_close(values_of(out), values_of(want_out), tol, tol, "affine");
  }

  const Tensor g = tensor_of(normal_values(static_cast<size_t>(total), 1.0, 24), shape, dt);
  const Tensor rstd = tensor_of(normal_values(c, 0.3, 25), {c}, dt).abs();
  const Tensor w = affine ? tensor_of(normal_values(c, 1.0, 26), {c}, dt) : Tensor();
  Tensor gx = nan_tensor(shape, dt), sg = nan_tensor({c}, dt), sx = nan_tensor({c}, dt);
  Tensor want_gx = nan_tensor(shape, dt), want_sg = nan_tensor({c}, dt), want_sx = nan_tensor({c}, dt);
  ember::cpu::channel_norm_backward(want_gx, want_sg, want_sx, g, x, want_mean, rstd, w, n, c, inner, batch_stats);
  run_channel_sums<T, ChannelSum::kGradient>(ptr<T>(sg), ptr<T>(sx), x, ptr<T>(g), ptr<T>(want_mean), ptr<T>(rstd), n,
                                             c, inner, T(1), sm_count);
  for (unsigned blocks : {1u, 3u, 7u}) {
    launch(blocks, 64, 0, [&] {
      ember::cuda::channel_grad_kernel<T>(ptr<T>(gx), ptr<T>(g), ptr<T>(x), ptr<T>(want_mean), ptr<T>(rstd), ptr<T>(w),
                                          ptr<T>(sg), ptr<T>(sx), c, inner, total, batch_stats);
    });
    require_close(values_of(gx), values_of(want_gx), tol * 10, tol * 10, "gx");
  }
  // The sums grow with the count: compare them relative to its square root.
  const double stol = tol * 10 * std::sqrt(static_cast<double>(n * inner));
  require_close(values_of(sg), values_of(want_sg), tol * 10, stol, "sum_g");
  require_close(values_of(sx), values_of(want_sx), tol * 10, stol, "sum_gxhat");
}

}  // namespace

TEST_CASE("softmax kernel (host emulation) against the CPU kernel", "[emulation]") {
  for (bool log : {false, true}) {
    softmax_case<float>(3, 5, 1, log, {});
    softmax_case<float>(2, 300, 1, log, {});         // rows longer than the 256-thread block
    softmax_case<float>(2, 1000, 3, log, {{7, -INFINITY}, {100, -INFINITY}});  // strided, masked entries
    softmax_case<double>(4, 257, 2, log, {});
    softmax_case<double>(1, 1, 1, log, {});
    softmax_case<float>(3, 40, 1, log, {{0, NAN}, {41, -INFINITY}, {80, 1e30}});  // NaN row, one -inf, a huge value
    softmax_case<double>(2, 40, 1, log, {{3, INFINITY}, {50, INFINITY}, {51, -INFINITY}});  // +inf entries
    std::vector<std::pair<int64_t, double>> all_masked;  // a whole row at -inf: NaN on both
    for (int64_t r = 0; r < 33; ++r) all_masked.push_back({33 + r, -INFINITY});
    softmax_case<float>(3, 33, 1, log, all_masked);
  }
}

TEST_CASE("layer_norm / rms_norm kernels (host emulation) against the CPU kernel and a float64 backward", "[emulation]") {
  for (bool rms : {false, true}) {
    for (bool affine : {false, true}) {
      row_norm_case<float>(3, 7, rms, affine);
      row_norm_case<float>(2, 100, rms, affine);
      row_norm_case<float>(2, 1500, rms, affine);  // longer than 1024 threads
      row_norm_case<double>(3, 33, rms, affine);
      row_norm_case<__half>(3, 70, rms, affine);
      row_norm_case<__nv_bfloat16>(2, 1030, rms, affine);
    }
  }
  row_norm_case<float>(4, 1, false, true);              // one column: var 0, rstd = 1/sqrt(eps)
  row_norm_case<float>(2, 64, false, false, 0.01, 1e3);  // large mean, small spread: two passes keep digits
}

TEST_CASE("cross_entropy / nll_loss kernels (host emulation) against the CPU kernels", "[emulation]") {
  for (bool weighted : {false, true}) {
    cross_entropy_case<float>(4, 3, 1, weighted, -100);
    cross_entropy_case<float>(3, 257, 1, weighted, 2);      // more classes than threads; ignore a real class
    cross_entropy_case<float>(2, 1000, 3, weighted, -100);  // strided classes
    cross_entropy_case<double>(5, 10, 2, weighted, -100);
    cross_entropy_case<__half>(3, 300, 1, weighted, -100);
    cross_entropy_case<__nv_bfloat16>(3, 11, 2, weighted, 4);
  }
  cross_entropy_case<float>(3, 20, 1, false, -100, {{5, NAN}, {21, -INFINITY}, {26, -INFINITY}});
  // +inf logits: at the target (loss NaN) and elsewhere (loss inf), as on the CPU and in PyTorch
  cross_entropy_case<double>(3, 20, 1, false, -100, {{3, INFINITY}, {20 + 12, INFINITY}});
}

TEST_CASE("batch_norm channel kernels (host emulation) against the CPU kernels", "[emulation]") {
  for (bool batch_stats : {true, false}) {
    batch_norm_case<float>(4, 3, 5, true, batch_stats);
    batch_norm_case<float>(8, 2, 300, false, batch_stats);  // 2,400 values per channel: longer than the block
    batch_norm_case<double>(3, 5, 1, true, batch_stats);
    batch_norm_case<double>(2, 7, 33, false, batch_stats);
  }
  // Channels split across blocks (partial sums, then a second pass): chunks
  // that start and end inside a plane, planes shorter and longer than the block.
  batch_norm_case<float>(8, 2, 4100, true, true, 132, 4);    // 32,800 values per channel
  batch_norm_case<double>(51, 3, 331, true, true, 132, 2);  // 16,881: the chunks meet mid-plane
  batch_norm_case<float>(2501, 2, 7, false, true, 132, 2);  // 7 per plane: each thread steps over planes
  batch_norm_case<float>(40, 1, 1000, true, false, 2, 4);   // one channel, few SMs
  batch_norm_case<float>(2, 10, 8200, true, true, 2, 1);    // the 10 channels fill 2 SMs: one pass
}

TEST_CASE("batch_norm channel splits: grid limits, GPU filled, short channels in one pass", "[emulation]") {
  using ember::cuda::channel_splits;
  CHECK(channel_splits(64, 128 * 56 * 56, 132) == 9);   // ResNet's first stage
  CHECK(channel_splits(256, 128 * 56 * 56, 132) == 3);
  CHECK(channel_splits(512, 128 * 7 * 7, 132) == 1);    // last stage: 512 blocks already
  CHECK(channel_splits(64, 8000, 132) == 1);            // short channels: one pass
  CHECK(channel_splits(1, int64_t{1} << 40, 100000) == 65535);
  CHECK(channel_splits(0, 0, 132) == 1);
}
