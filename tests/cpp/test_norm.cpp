// The norm family (and embedding / dropout) from C++: values against
// hand-computed answers, the running-stat update, backward, and errors.
#include <cmath>

#include <ember/ember.h>

#include "util.h"

using namespace ember;
using ember::test::require_throws;
using ember::test::require_values;
using ember::test::values;

TEST_CASE("layer_norm and rms_norm normalize the last dims", "[norm]") {
  Tensor x = values({1, 2, 3, 4, 4, 4}, {2, 3});
  const double s = 1.0 / std::sqrt(2.0 / 3.0 + 1e-5);
  require_values(layer_norm(x, {3}), {-s, 0, s, 0, 0, 0}, 1e-5);
  const double r = 1.0 / std::sqrt(14.0 / 3.0 + 1e-6);
  require_values(rms_norm(x, {3}, values({1, 2, 1}, {3}), 1e-6).narrow(0, 0, 1), {r, 4 * r, 3 * r}, 1e-5);
  require_throws<Error>([&] { layer_norm(x, {2}); }, "layer_norm: normalized_shape [2] does not match");
}

TEST_CASE("batch_norm in training updates the running statistics", "[norm]") {
  Tensor x = values({1, 10, 3, 20}, {2, 2}, DType::Float64);  // channel 0: {1, 3}, channel 1: {10, 20}
  Tensor rm = zeros({2}, DType::Float64), rv = ones({2}, DType::Float64);
  Tensor y = batch_norm(x, rm, rv, Tensor(), Tensor(), /*training=*/true, /*momentum=*/0.5, /*eps=*/0.0);
  require_values(y, {-1, -1, 1, 1}, 1e-9);
  require_values(rm, {1.0, 7.5});
  require_values(rv, {0.5 + 0.5 * 2.0, 0.5 + 0.5 * 50.0});  // unbiased variances 2 and 50
  require_throws<ValueError>([&] { batch_norm(values({1, 2}, {1, 2}), rm, rv, Tensor(), Tensor(), true); },
                             "more than 1 value per channel");
}

TEST_CASE("group_norm backward sums to zero per group", "[norm]") {
  Tensor x = randn({2, 4, 3}, DType::Float64).requires_grad_();
  Tensor w = randn({2, 4, 3}, DType::Float64);
  mul(group_norm(x, 2), w).sum().backward();
  // d/dx of a standardized group is orthogonal to the constant direction.
  const Tensor per_group = x.grad().reshape({2, 2, 6}).sum({2});
  for (double v : ember::test::to_vector(per_group)) CHECK(std::abs(v) < 1e-10);
}

TEST_CASE("embedding gathers rows and rejects bad indices", "[norm]") {
  Tensor w = values({0, 1, 10, 11, 20, 21}, {3, 2}).requires_grad_();
  Tensor idx = values({2, 0, 2}, {3}, DType::Int64);
  Tensor out = embedding(idx, w, /*padding_idx=*/0);
  require_values(out, {20, 21, 0, 1, 20, 21});
  out.sum().backward();
  require_values(w.grad(), {0, 0, 0, 0, 2, 2});
  require_throws<IndexError>([&] { embedding(values({3}, {1}, DType::Int64), w); }, "embedding: index 3");
}

TEST_CASE("dropout keeps the expected fraction, scaled", "[norm]") {
  Tensor y = dropout(ones({10000}), 0.25);
  const std::vector<double> v = ember::test::to_vector(y);
  int kept = 0;
  for (double e : v) {
    if (e != 0) {
      ++kept;
      CHECK(e == Approx(1 / 0.75));
    }
  }
  CHECK(std::abs(kept / 10000.0 - 0.75) < 0.02);
  require_throws<ValueError>([] { dropout(ones({2}), -0.1); }, "dropout: dropout probability");
}
