// The loss family from C++: values against hand-computed answers, the
// fused cross_entropy's gradient, reductions and errors.
#include <cmath>

#include <ember/ember.h>

#include "util.h"

using namespace ember;
using ember::test::require_throws;
using ember::test::require_values;
using ember::test::values;

TEST_CASE("cross_entropy on class indices with weights and ignore_index", "[loss]") {
  Tensor x = values({0, 0, 0, 1, 2, 3}, {2, 3}).requires_grad_();
  Tensor t = values({1, 2}, {2}, DType::Int64);
  const double l0 = std::log(3.0), l1 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
  require_values(cross_entropy(x, t, Tensor(), -100, "none"), {l0, l1}, 1e-5);
  require_values(cross_entropy(x, t, values({1, 2, 4}, {3}), -100, "mean"), {(2 * l0 + 4 * l1) / 6}, 1e-5);
  require_values(cross_entropy(x, t, Tensor(), 2, "mean"), {l0}, 1e-5);
  cross_entropy(x, t, Tensor(), -100, "sum").backward();
  const double e = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  require_values(x.grad(), {1 / 3.0, 1 / 3.0 - 1, 1 / 3.0, std::exp(1.0) / e, std::exp(2.0) / e,
                            std::exp(3.0) / e - 1}, 1e-5);
  require_throws<IndexError>([&] { cross_entropy(x, values({0, 3}, {2}, DType::Int64)); },
                             "cross_entropy: target 3 is out of bounds");
}

TEST_CASE("pointwise losses and reductions", "[loss]") {
  Tensor a = values({0.5, 0.25}, {2}), b = values({1, 0}, {2});
  require_values(mse_loss(a, b, "sum"), {0.25 + 0.0625});
  require_values(l1_loss(a, b, "mean"), {0.375});
  require_values(smooth_l1_loss(a, b, "none", 0.5), {0.25, 0.0625});
  require_values(binary_cross_entropy(a, b, Tensor(), "none"), {-std::log(0.5), -std::log(0.75)}, 1e-5);
  require_values(binary_cross_entropy_with_logits(values({0}, {1}), values({1}, {1})), {std::log(2.0)}, 1e-6);
  require_values(kl_div(values({-1, -1}, {1, 2}), values({0.5, 0.5}, {1, 2}), "batchmean"),
                 {2 * 0.5 * (std::log(0.5) + 1)}, 1e-5);
  require_throws<ValueError>([&] { mse_loss(a, b, "avg"); }, "mse_loss: 'avg' is not a valid value for reduction");
}
