// Autocast from C++: the thread-local state drives the op front-ends directly
// (no Python), and GradScaler's two ops.
#include <ember/core/autocast.h>
#include <ember/core/ops/amp.h>
#include <ember/core/ops/loss.h>
#include <ember/core/ops/matmul.h>

#include <limits>

#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::values;

namespace {
// Turns CPU autocast on for a scope, restoring the state and cache after.
struct CpuAutocast {
  explicit CpuAutocast(DType dtype) : prev_(autocast::is_enabled(DeviceType::CPU)) {
    autocast::set_enabled(DeviceType::CPU, true);
    autocast::set_dtype(DeviceType::CPU, dtype);
    autocast::increment_nesting();
  }
  ~CpuAutocast() {
    if (autocast::decrement_nesting() == 0) autocast::clear_cache();
    autocast::set_enabled(DeviceType::CPU, prev_);
    autocast::set_dtype(DeviceType::CPU, DType::BFloat16);
  }
  bool prev_;
};
}  // namespace

TEST_CASE("C++ front-ends follow the autocast state", "[amp]") {
  const Tensor a = values({1, 2, 3, 4}, {2, 2}), b = values({1, 0, 0, 1}, {2, 2});
  REQUIRE(matmul(a, b).dtype() == DType::Float32);
  {
    CpuAutocast ac(DType::BFloat16);
    REQUIRE(matmul(a, b).dtype() == DType::BFloat16);
    REQUIRE(addmm(values({1, 1}, {2}), a, b).dtype() == DType::BFloat16);
    const Tensor logits = matmul(a, b);
    REQUIRE(mse_loss(logits, logits).dtype() == DType::Float32);
    REQUIRE(a.to(DType::Float64).matmul(b.to(DType::Float64)).dtype() == DType::Float64);
    // The Scope turns autocast off for what runs inside an autocast op.
    autocast::Scope outer{"matmul", a, b};
    REQUIRE(static_cast<bool>(outer));
    REQUIRE(outer[0].dtype() == DType::BFloat16);
    REQUIRE(matmul(a, b).dtype() == DType::Float32);
  }
  REQUIRE(matmul(a, b).dtype() == DType::Float32);
  REQUIRE(!autocast::Scope{"matmul", a, b});
}

TEST_CASE("the weight cast cache reuses a parameter's cast", "[amp]") {
  Tensor w = values({1, 2, 3, 4}, {2, 2});
  w.requires_grad_(true);
  const Tensor x = values({1, 1}, {1, 2});
  const int64_t casts = autocast::cache_casts();
  {
    CpuAutocast ac(DType::Float16);
    const Tensor y1 = matmul(x, w), y2 = mm(x, w);
    REQUIRE(y1.dtype() == DType::Float16);
    REQUIRE(autocast::cache_casts() - casts == 1);
    REQUIRE(autocast::cache_size() == 1);
  }
  REQUIRE(autocast::cache_size() == 0);
}

TEST_CASE("amp ops: unscale with inf check, scale update", "[amp]") {
  std::vector<Tensor> grads{values({2, 4}, {2}), values({8, 0}, {2}, DType::Float64)};
  Tensor found = values({0}, {1});
  amp_foreach_non_finite_check_and_unscale_(grads, found, values({0.5}, {1}));
  require_values(grads[0], {1, 2});
  require_values(grads[1], {4, 0});
  require_values(found, {0});
  std::vector<Tensor> bad{values({1, std::numeric_limits<double>::infinity()}, {2})};
  amp_foreach_non_finite_check_and_unscale_(bad, found, values({0.5}, {1}));
  require_values(found, {1});

  Tensor scale = values({4}, {}), tracker = values({0}, {}, DType::Int32);
  amp_update_scale_(scale, tracker, values({0}, {}), 2.0, 0.5, 1);
  require_values(scale, {8});
  amp_update_scale_(scale, tracker, found, 2.0, 0.5, 1);
  require_values(scale, {4});
  require_values(tracker, {0});
  require_throws<Error>([&] { amp_update_scale_(scale, scale, found, 2.0, 0.5, 1); },
                        "_amp_update_scale_: growth_tracker must be a int32 tensor");
}
