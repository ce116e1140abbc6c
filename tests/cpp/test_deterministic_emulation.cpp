// The deterministic index accumulation of cuda/index.cu (cuda/device/
// deterministic_kernels.cuh) on the CPU through tests/cpp/cuda_emulation.h:
// RecordOffsetOp run by the index kernel over the values, a stable sort of the
// offsets, then run_sum_kernel over a grid-stride loop with fewer threads than
// elements, against ember's CPU index_put_ with accumulate, which adds in
// element order too: the same bits for 32/64-bit types; the 16-bit floats
// within half an ulp of the exact sum; many duplicate targets, a column-major destination.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"
#include "cuda_emulation.h"

#include <ember/cuda/device/deterministic_kernels.cuh>
#include <ember/cuda/device/index_kernels.cuh>

namespace {

using namespace emu_test;
namespace kc = ember::cuda;
using ember::Strides;

// dst.index_add_(0, index, values) the way cuda/index.cu's deterministic path
// runs it: values [n, m] contiguous, dst [rows, m] (any strides).
template <class T>
void emulated_deterministic_index_add(Tensor& dst, const Tensor& index, const Tensor& values) {
  const int64_t n = values.numel(), m = values.size(1);
  // The index kernel's operands as index_add builds them: the plain side is
  // the values, the indexed side dst's rows chosen by the (expanded) index.
  const Tensor index2 = index.unsqueeze(1).expand({index.size(0), m}).contiguous();
  std::vector<Strides> strides{values.strides(), {0, dst.stride(1)}, index2.strides()};
  const kc::IndexLayout l = kc::coalesce(values.shape(), strides);
  const std::vector<const int64_t*> data{index2.data<int64_t>()};
  const kc::IndexGeometry<1> g = kc::make_geometry<1>(l, data, {dst.stride(0)}, {dst.size(0)});
  std::vector<int64_t> offsets(static_cast<size_t>(n));
  launch(2, 64, 0, [&] { kc::index_kernel<1, int64_t, kc::RecordOffsetOp>(g, n, kc::RecordOffsetOp{offsets.data()}); });
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return offsets[a] < offsets[b]; });
  std::vector<int64_t> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[i] = offsets[order[i]];
  launch(3, 32, 0, [&] {
    kc::run_sum_kernel<T>(ptr<T>(dst), ptr<const T>(values), keys.data(), order.data(), n);
  });
}

template <class T>
void check(DType dtype, double rtol) {
  std::mt19937 rng(7);
  const int64_t rows = 5, n = 300, m = 3;
  std::vector<double> idx(n);
  for (double& v : idx) v = static_cast<double>(rng() % rows);  // ~60 adds per row
  const Tensor index = tensor_of(idx, {n}, DType::Int64);
  const bool integral = dtype == DType::Int64 || dtype == DType::Int32 || dtype == DType::Bool;
  std::vector<double> vals = normal_values(n * m, 1.0, 11);
  if (integral) for (double& v : vals) v = dtype == DType::Bool ? (v > 1.0) : std::round(v * 1000);
  const Tensor values = tensor_of(vals, {n, m}, dtype);
  std::vector<double> base = normal_values(rows * m, 1.0, 13);
  if (integral) for (double& v : base) v = dtype == DType::Bool ? 0.0 : std::round(v * 100);
  // The destination stored column-major: rows one element apart.
  Tensor dst = tensor_of(base, {rows, m}, dtype).t().contiguous().t();
  REQUIRE(dst.stride(0) == 1);
  // The 16-bit floats: against the exact sum of the same (rounded) numbers, which the run's float
  // accumulation and single rounding meet; the CPU rounds after every add and drifts further.
  const bool half = dtype == DType::Float16 || dtype == DType::BFloat16;
  const Tensor start = tensor_of(base, {rows, m}, dtype);
  const Tensor want = half ? ember::index_add(start.to(DType::Float64), 0, index, values.to(DType::Float64))
                           : ember::index_add(start, 0, index, values);
  emulated_deterministic_index_add<T>(dst, index, values);
  require_close(values_of(dst), values_of(want), rtol, half ? 1e-4 : 0.0, "deterministic index_add");
}

}  // namespace

TEST_CASE("deterministic accumulate adds each target's values in element order", "[cuda][emulation][index]") {
  check<float>(DType::Float32, 0.0);  // the CPU's bits
  check<double>(DType::Float64, 0.0);
  check<int64_t>(DType::Int64, 0.0);
  check<int32_t>(DType::Int32, 0.0);
  check<bool>(DType::Bool, 0.0);
  check<__half>(DType::Float16, 1.0 / 2048);  // a run summed in float, rounded once: half an ulp
  check<__nv_bfloat16>(DType::BFloat16, 1.0 / 256);
}
