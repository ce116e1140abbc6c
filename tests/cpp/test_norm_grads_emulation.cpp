// layer_norm / rms_norm's weight and bias gradients on the GPU
// (cuda/device/norm_kernels.cuh: param_grad_plan, row_norm_param_grads_kernel,
// row_norm_param_finish_kernel) run on the CPU under tests/cpp/cuda_emulation.h,
// launched as cuda/norm.cu launches them, against a float64 column sum of the
// same (rounded) inputs: one row, a few rows, rows split into many chunks, one
// column, odd tiles, 768 columns, a GPT-2-like shape; float32, float64,
// float16, bfloat16; gw or gb alone; fewer blocks than column tiles. The plan
// itself: the grid limits and that every row lands in exactly one chunk.
#include <ember/core/cpu/norm.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/norm_kernels.cuh>

namespace {

using namespace emu_test;
using ember::cuda::Acc;
using ember::cuda::param_grad_plan;
using ember::cuda::ParamGradPlan;

template <class T> struct Of;
template <> struct Of<float> { static constexpr DType dtype = DType::Float32; };
template <> struct Of<double> { static constexpr DType dtype = DType::Float64; };
template <> struct Of<__half> { static constexpr DType dtype = DType::Float16; };
template <> struct Of<__nv_bfloat16> { static constexpr DType dtype = DType::BFloat16; };

// cuda/norm.cu's launch of the two kernels, with the SM count and a cap on
// gridDim.x (the tiles grid-stride past it) as parameters.
template <class T, class A = typename Acc<T>::type>
ParamGradPlan run_param_grads(Tensor& gw, Tensor& gb, const Tensor& g, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, int64_t rows, int64_t cols, int sm_count, int64_t max_grid_x) {
  const ParamGradPlan plan = param_grad_plan(rows, cols, sm_count);
  A* pw = ptr<A>(gw);
  A* pb = ptr<A>(gb);
  Tensor part;
  if (plan.chunks > 1) {
    part = nan_tensor({2, plan.chunks, cols}, std::is_same_v<A, double> ? DType::Float64 : DType::Float32);
    pw = gw.defined() ? ptr<A>(part) : nullptr;
    pb = gb.defined() ? ptr<A>(part) + plan.chunks * cols : nullptr;
  }
  const dim3 grid(static_cast<unsigned>(std::min(plan.tiles, max_grid_x)), static_cast<unsigned>(plan.chunks));
  launch(grid, dim3(ember::cuda::kParamTileCols, ember::cuda::kParamRowLanes), 0, [&] {
    ember::cuda::row_norm_param_grads_kernel<T>(pw, pb, ptr<T>(g), ptr<T>(x), ptr<A>(mean), ptr<A>(rstd), rows, cols,
                                                plan.chunk_rows);
  });
  if (plan.chunks > 1) {
    launch(2, 64, 0, [&] {  // fewer threads than columns: grid-stride
      ember::cuda::row_norm_param_finish_kernel<A>(ptr<A>(gw), ptr<A>(gb), pw, pb, plan.chunks, cols);
    });
  }
  return plan;
}

template <class T>
void param_grads_case(int64_t rows, int64_t cols, bool rms, int sm_count, bool want_w = true, bool want_b = true,
                      int64_t max_grid_x = 65535) {
  using A = typename Acc<T>::type;
  const DType dt = Of<T>::dtype, at = std::is_same_v<A, double> ? DType::Float64 : DType::Float32;
  const ParamGradPlan plan = param_grad_plan(rows, cols, sm_count);
  INFO("param grads rows " << rows << " cols " << cols << " rms " << rms << " sms " << sm_count << " w " << want_w
                           << " b " << want_b << " grid.x cap " << max_grid_x << " dtype " << ember::dtype_name(dt)
                           << ": " << plan.tiles << " tiles, " << plan.chunks << " chunks of " << plan.chunk_rows);
  std::vector<double> xv = normal_values(static_cast<size_t>(rows * cols), 1.5, static_cast<unsigned>(rows + cols));
  for (double& e : xv) e += 0.5;
  const Tensor x = tensor_of(xv, {rows, cols}, dt);
  const Tensor g = tensor_of(normal_values(static_cast<size_t>(rows * cols), 1.0, 7), {rows, cols}, dt);
  // The statistics from the CPU's forward, as the GPU backward gets them from its own.
  Tensor y = nan_tensor({rows, cols}, at), mean = rms ? Tensor() : nan_tensor({rows}, at), rstd = nan_tensor({rows}, at);
  ember::cpu::row_norm(y, mean, rstd, x.to(at), Tensor(), Tensor(), rows, cols, 1e-5, rms);

  Tensor gw = want_w ? nan_tensor({cols}, at) : Tensor(), gb = want_b ? nan_tensor({cols}, at) : Tensor();
  run_param_grads<T>(gw, gb, g, x, mean, rstd, rows, cols, sm_count, max_grid_x);

  const std::vector<double> X = values_of(x), G = values_of(g), R = values_of(rstd),
                            M = rms ? std::vector<double>(static_cast<size_t>(rows), 0.0) : values_of(mean);
  std::vector<double> rgw(static_cast<size_t>(cols), 0.0), rgb(static_cast<size_t>(cols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      const double gv = G[r * cols + j];
      rgw[j] += gv * ((X[r * cols + j] - M[r]) * R[r]);
      rgb[j] += gv;
    }
  }
  // Float32 accumulation (also for the 16-bit types, whose loads are exact):
  // the error grows with the number of rows summed.
  const bool f64 = std::is_same_v<A, double>;
  const double rtol = f64 ? 1e-12 : 1e-5, atol = (f64 ? 1e-13 : 2e-6) * static_cast<double>(rows);
  if (want_w) require_close(values_of(gw), rgw, rtol, atol, "gw");
  if (want_b) require_close(values_of(gb), rgb, rtol, atol, "gb");

  // Deterministic: the sums' order depends on the plan only, not on the grid
  // or the order blocks run in.
  if (plan.tiles > 1 && max_grid_x > 1) {
    Tensor gw2 = want_w ? nan_tensor({cols}, at) : Tensor(), gb2 = want_b ? nan_tensor({cols}, at) : Tensor();
    run_param_grads<T>(gw2, gb2, g, x, mean, rstd, rows, cols, sm_count, 1);
    if (want_w) require_close(values_of(gw2), values_of(gw), 0, 0, "gw (one block per chunk)");
    if (want_b) require_close(values_of(gb2), values_of(gb), 0, 0, "gb (one block per chunk)");
  }
}

}  // namespace

TEST_CASE("row norm param-grad plan: grid limits, every row in one chunk, one pass for few rows", "[emulation]") {
  for (int sms : {1, 16, 132, 100000}) {
    for (int64_t rows : {int64_t{1}, int64_t{3}, int64_t{127}, int64_t{128}, int64_t{129}, int64_t{5000},
                         int64_t{8192}, int64_t{1} << 20, int64_t{1} << 34}) {
      for (int64_t cols : {int64_t{1}, int64_t{33}, int64_t{768}, int64_t{4096}, int64_t{1} << 22}) {
        const ParamGradPlan p = param_grad_plan(rows, cols, sms);
        INFO("rows " << rows << " cols " << cols << " sms " << sms);
        REQUIRE(p.tiles == (cols + 31) / 32);
        REQUIRE(p.chunks >= 1);
        REQUIRE(p.chunks <= 65535);
        REQUIRE(p.chunk_rows >= 1);
        REQUIRE(p.chunks * p.chunk_rows >= rows);         // every row is in a chunk
        REQUIRE((p.chunks - 1) * p.chunk_rows < rows);    // and no chunk is empty
        if (rows <= ember::cuda::kParamMinChunkRows) REQUIRE(p.chunks == 1);
        if (p.chunks > 1) REQUIRE(p.chunk_rows >= ember::cuda::kParamMinChunkRows);
        // Chunks only to fill the GPU: about 4 blocks per SM, no more.
        if (p.chunks > 1) REQUIRE(p.tiles * (p.chunks - 1) < 4 * int64_t{sms});
      }
    }
  }
  // GPT-2's 8 x 1024 rows of 768 on an H200's 132 SMs: 24 tiles x 22 chunks.
  const ParamGradPlan gpt2 = param_grad_plan(8192, 768, 132);
  CHECK(gpt2.tiles == 24);
  CHECK(gpt2.chunks == 22);
  CHECK(gpt2.chunk_rows == 373);
  CHECK(param_grad_plan(4096 * 8, 64, 132).chunks == 256);  // few columns: more chunks, of 128 rows
  CHECK(param_grad_plan(64, 768, 132).chunks == 1);
}

TEST_CASE("layer_norm / rms_norm weight and bias gradient kernels (host emulation) against a float64 sum",
          "[emulation]") {
  for (bool rms : {false, true}) {
    // rows 1 / 3 / 100 / 5000-ish with few columns
    param_grads_case<float>(1, 5, rms, 132);
    param_grads_case<float>(3, 7, rms, 132);
    param_grads_case<float>(100, 9, rms, 132);
    param_grads_case<float>(5000, 3, rms, 132);   // 39 chunks of 129 rows
    param_grads_case<double>(4999, 40, rms, 132);  // two tiles, the second partial
    param_grads_case<__half>(3001, 17, rms, 132);
    param_grads_case<__nv_bfloat16>(5003, 33, rms, 132);
    // cols 1 / 33 / 768 with few rows (one chunk, written directly)
    param_grads_case<float>(300, 1, rms, 132);
    param_grads_case<double>(2, 33, rms, 132);
    param_grads_case<__half>(4, 768, rms, 132);
    param_grads_case<__nv_bfloat16>(3, 768, rms, 132);
  }
  // Fewer blocks than tiles: the tile loop grid-strides (also past a chunked plan).
  param_grads_case<float>(5, 768, false, 132, true, true, 5);
  param_grads_case<float>(1000, 100, false, 2, true, true, 3);
  // One of the two gradients.
  param_grads_case<float>(700, 40, false, 132, true, false);
  param_grads_case<__nv_bfloat16>(700, 40, true, 132, false, true);
  // A GPT-2-like block: 1,024 rows of 768 on 132 SMs, in bfloat16 and float32.
  param_grads_case<__nv_bfloat16>(1024, 768, false, 132);
  param_grads_case<float>(1024, 768, true, 132);
}
