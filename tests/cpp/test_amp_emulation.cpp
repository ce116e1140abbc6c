// GradScaler's kernels (cuda/device/amp_kernels.cuh) run on the CPU through
// tests/cpp/cuda_emulation.h against ember's CPU path: unscaling float32,
// float64, float16 and bfloat16 gradients (with and without inf / NaN, the
// flag raised by any block of a grid-stride launch), and the scale update
// over a sequence of steps (backoff, growth after growth_interval clean steps,
// a growth that would overflow).
#include <ember/core/cpu/amp.h>
#include <ember/core/ops/amp.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/amp_kernels.cuh>

namespace {

using namespace emu_test;

template <class T, class C>
void unscale_case(DType dt, int64_t n, std::vector<std::pair<int64_t, double>> specials) {
  INFO("unscale n " << n << " " << ember::dtype_name(dt) << " specials " << specials.size());
  std::vector<double> v = normal_values(static_cast<size_t>(n), 1000.0, 8);
  for (auto [i, x] : specials) v[static_cast<size_t>(i)] = x;
  Tensor want = tensor_of(v, {n}, dt), got = want.to(dt, /*copy=*/true);
  const float inv = 1.0f / 1024.0f * 3.0f;
  const bool want_bad = ember::cpu::unscale_and_check(want, inv);
  float found_inf = 0.0f;
  launch(3, 256, 0, [&] {  // fewer threads than elements: grid-stride
    ember::cuda::unscale_kernel<T, C>(static_cast<T*>(got.data_ptr()), n, &found_inf, &inv);
  });
  REQUIRE((found_inf != 0.0f) == want_bad);
  require_close(values_of(got), values_of(want), 0, 0, "unscaled");  // same rounding, bit for bit
}

}  // namespace

TEST_CASE("GradScaler unscale kernel (host emulation) against the CPU", "[emulation]") {
  for (bool bad : {false, true}) {
    std::vector<std::pair<int64_t, double>> specials;
    if (bad) specials = {{1999, INFINITY}};  // in the last block's share only
    unscale_case<float, float>(DType::Float32, 2000, specials);
    unscale_case<double, double>(DType::Float64, 1000, bad ? std::vector<std::pair<int64_t, double>>{{3, NAN}} : specials);
    unscale_case<__half, float>(DType::Float16, 1500, bad ? std::vector<std::pair<int64_t, double>>{{700, 1e6}} : specials);
    unscale_case<__nv_bfloat16, float>(DType::BFloat16, 900, bad ? std::vector<std::pair<int64_t, double>>{{0, -INFINITY}} : specials);
  }
}

TEST_CASE("GradScaler update kernel (host emulation) against the CPU", "[emulation]") {
  const double growth = 2.0, backoff = 0.5;
  const int64_t interval = 3;
  Tensor scale = tensor_of({65536.0}, {1}, DType::Float32), tracker = tensor_of({0.0}, {1}, DType::Int32);
  float s = 65536.0f;
  int t = 0;
  const std::vector<float> found = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0};
  for (size_t step = 0; step < found.size(); ++step) {
    INFO("step " << step);
    const Tensor f = tensor_of({found[step]}, {1}, DType::Float32);
    ember::amp_update_scale_(scale, tracker, f, growth, backoff, interval);
    launch(1, 1, 0, [&] { ember::cuda::update_scale_kernel(&s, &t, &found[step], growth, backoff, interval); });
    REQUIRE(s == values_of(scale)[0]);
    REQUIRE(t == values_of(tracker)[0]);
  }
  // A growth that overflows float32 keeps the scale (and resets the tracker).
  float big = 3e38f;
  int tb = 0;
  const float clean = 0.0f;
  launch(1, 1, 0, [&] { ember::cuda::update_scale_kernel(&big, &tb, &clean, growth, backoff, 1); });
  REQUIRE(big == 3e38f);
  REQUIRE(tb == 0);
}
