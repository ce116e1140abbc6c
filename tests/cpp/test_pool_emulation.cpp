// The pooling kernels (cuda/device/pool_kernels.cuh) run on the CPU through
// tests/cpp/cuda_emulation.h against ember's CPU kernels (core/cpu/pool.cpp):
// max pooling (values and indices, ties and NaN), average pooling with and
// without counted padding or a divisor override, adaptive windows, ceil-mode
// windows reaching into the padding, and the backward passes (atomic adds
// where windows overlap).
#include <ember/core/cpu/pool.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/pool_kernels.cuh>

namespace {

using namespace emu_test;
using ember::cpu::PoolGeom;

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (o - 1) * s >= in + p) --o;  // the last window must start inside the input or left padding
  return o;
}

PoolGeom fixed(int64_t H, int64_t W, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  PoolGeom g;
  g.kh = g.kw = k, g.sh = g.sw = s, g.ph = g.pw = p, g.dh = g.dw = d, g.H = H, g.W = W;
  g.OH = out_size(H, k, s, p, d, ceil_mode), g.OW = out_size(W, k, s, p, d, ceil_mode);
  return g;
}

PoolGeom adaptive(int64_t H, int64_t W, int64_t OH, int64_t OW) {
  PoolGeom g;
  g.adaptive = true, g.H = H, g.W = W, g.OH = OH, g.OW = OW;
  return g;
}

template <class T>
void pool_case(const PoolGeom& g, int64_t planes, bool check_max, std::vector<std::pair<int64_t, double>> specials = {}) {
  const DType dt = std::is_same_v<T, float> ? DType::Float32 : DType::Float64;
  INFO("pool H " << g.H << " W " << g.W << " OH " << g.OH << " OW " << g.OW << " k " << g.kh << " s " << g.sh << " p "
                 << g.ph << " d " << g.dh << " adaptive " << g.adaptive << " include_pad " << g.count_include_pad
                 << " divisor " << g.divisor_override << " " << ember::dtype_name(dt));
  const int64_t in_n = planes * g.H * g.W, total = planes * g.OH * g.OW;
  std::vector<double> xv(static_cast<size_t>(in_n));
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>((i * 37) % 11) - 5;  // many ties
  for (auto [i, v] : specials) xv[static_cast<size_t>(i)] = v;
  const Tensor x = tensor_of(xv, {planes, g.H, g.W}, dt);
  const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-13;
  if (check_max) {
    Tensor out = nan_tensor({planes, g.OH, g.OW}, dt), want = nan_tensor({planes, g.OH, g.OW}, dt);
    Tensor idx = tensor_of(std::vector<double>(total, -9), {total}, DType::Int64), want_idx = idx.to(DType::Int64, true);
    ember::cpu::max_pool2d(want, want_idx, x, g);
    launch(3, ember::cuda::kPoolThreads, 0, [&] {
      ember::cuda::max_pool_kernel<T>(ptr<T>(out), ptr<int64_t>(idx), ptr<T>(x), g, total);
    });
    require_close(values_of(out), values_of(want), 0, 0, "max");
    require_close(values_of(idx), values_of(want_idx), 0, 0, "indices");
    // Backward: gy scattered to the argmax, adding where windows share it.
    const Tensor gy = tensor_of(normal_values(total, 1.0, 4), {planes, g.OH, g.OW}, dt);
    Tensor gx = tensor_of(std::vector<double>(in_n, 0.0), {planes, g.H, g.W}, dt);
    launch(2, 64, 0, [&] {
      ember::cuda::max_pool_backward_kernel<T>(ptr<T>(gx), ptr<T>(gy), ptr<int64_t>(idx), g.H * g.W, g.OH * g.OW, total);
    });
    std::vector<double> rgx(in_n, 0.0);
    const std::vector<double> GY = values_of(gy), I = values_of(want_idx);
    for (int64_t k = 0; k < total; ++k) rgx[(k / (g.OH * g.OW)) * g.H * g.W + static_cast<int64_t>(I[k])] += GY[k];
    require_close(values_of(gx), rgx, tol, tol, "max backward");
  }
  Tensor out = nan_tensor({planes, g.OH, g.OW}, dt), want = nan_tensor({planes, g.OH, g.OW}, dt);
  ember::cpu::avg_pool2d(want, x, g);
  launch(3, ember::cuda::kPoolThreads, 0, [&] { ember::cuda::avg_pool_kernel<T>(ptr<T>(out), ptr<T>(x), g, total); });
  require_close(values_of(out), values_of(want), tol, tol, "avg");
  const Tensor gy = tensor_of(normal_values(total, 1.0, 5), {planes, g.OH, g.OW}, dt);
  Tensor gx = tensor_of(std::vector<double>(in_n, 0.0), {planes, g.H, g.W}, dt), want_gx = gx.to(dt, true);
  ember::cpu::avg_pool2d_backward(want_gx, gy, g);
  launch(2, 64, 0, [&] { ember::cuda::avg_pool_backward_kernel<T>(ptr<T>(gx), ptr<T>(gy), g, total); });
  require_close(values_of(gx), values_of(want_gx), tol, tol, "avg backward");
}

}  // namespace

TEST_CASE("pooling kernels (host emulation) against the CPU kernels", "[emulation]") {
  pool_case<float>(fixed(7, 9, 3, 2, 1, 1, false), 2, true, {{5, NAN}, {70, NAN}, {71, NAN}});
  pool_case<double>(fixed(8, 8, 2, 2, 0, 1, false), 3, true);
  pool_case<float>(fixed(9, 10, 3, 1, 0, 2, false), 1, true);  // dilation
  pool_case<float>(fixed(7, 7, 3, 2, 1, 1, true), 2, true);    // ceil mode: windows into the padding
  pool_case<float>(adaptive(10, 7, 3, 4), 2, true);
  pool_case<double>(adaptive(5, 5, 7, 6), 1, true);             // more outputs than inputs: windows overlap
  PoolGeom g = fixed(7, 9, 3, 2, 1, 1, true);
  g.count_include_pad = false;
  pool_case<float>(g, 2, false);
  g.divisor_override = 3;
  pool_case<double>(g, 1, false);
}
