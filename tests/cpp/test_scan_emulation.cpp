// The running reductions' CUDA kernel (cuda/device/scan_kernels.cuh) run on
// the CPU under the emulation, against ember's CPU kernel (core/cpu/scan.cpp),
// for every op on float, double and int64 columns: several blocks of threads,
// a grid smaller than the columns (the grid-stride loop), inner > 1.
#include <cmath>
#include <vector>

#include <ember/core/cpu/scan.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"
#include "cuda_emulation.h"

#include <ember/cuda/device/scan_kernels.cuh>

namespace {

using namespace emu_test;
namespace kc = ember::cuda;
using ember::ScanOp;

template <ScanOp Op, class T>
void check(DType dtype, const char* what) {
  const int64_t outer = 3, length = 37, inner = 5;
  std::vector<double> v = normal_values(static_cast<size_t>(outer * length * inner), 1.5, 7);
  for (size_t i = 0; i < v.size(); i += 11) v[i] = std::round(v[i]);  // ties for max/min, zeros for prod
  if (dtype == DType::Float32 || dtype == DType::Float64) v[20] = NAN;
  const Tensor x = tensor_of(v, {outer, length, inner}, dtype);
  Tensor want = ember::empty(x.shape(), dtype), want_idx = ember::empty(x.shape(), DType::Int64);
  Tensor got = nan_tensor(x.shape(), dtype), got_idx = ember::empty(x.shape(), DType::Int64);
  const bool indexed = Op == ScanOp::Max || Op == ScanOp::Min;
  Tensor none;
  ember::cpu::scan(Op, want, indexed ? want_idx : none, x, outer, length, inner);
  const int64_t columns = outer * inner;
  launch(2, 4, 0, [&] {  // 8 threads for 15 columns: the grid-stride loop runs twice
    kc::scan_kernel<Op, T>(ptr<T>(x), ptr<T>(got), indexed ? ptr<int64_t>(got_idx) : nullptr, columns, length, inner);
  });
  require_close(values_of(got), values_of(want), 0, 0, what);
  if (indexed) require_close(values_of(got_idx), values_of(want_idx), 0, 0, what);
}

}  // namespace

TEST_CASE("running reductions of the CUDA kernel match the CPU kernel", "[emulation][scan]") {
  check<ScanOp::Prod, double>(DType::Float64, "cumprod f64");
  check<ScanOp::Prod, int64_t>(DType::Int64, "cumprod i64");
  check<ScanOp::Max, float>(DType::Float32, "cummax f32");
  check<ScanOp::Min, double>(DType::Float64, "cummin f64");
  check<ScanOp::Max, int64_t>(DType::Int64, "cummax i64");
  check<ScanOp::LogSumExp, float>(DType::Float32, "logcumsumexp f32");
  check<ScanOp::LogSumExp, double>(DType::Float64, "logcumsumexp f64");
}
