// Optimizer updates from C++: one call updates a whole group in place,
// creates missing state, counts steps, and rejects mismatched arguments.
#include <ember/core/ops/optim.h>

#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::values;

TEST_CASE("sgd_ with momentum starts the buffer from the first gradient", "[optim]") {
  std::vector<Tensor> params{values({1, 2}, {2}, DType::Float64), values({3}, {}, DType::Float64)};
  std::vector<Tensor> grads{values({1, -1}, {2}, DType::Float64), values({2}, {}, DType::Float64)};
  std::vector<Tensor> bufs(2);
  SgdOptions o;
  o.lr = 0.1;
  o.momentum = 0.9;
  const uint32_t version = params[0].version();
  sgd_(params, grads, bufs, o);
  REQUIRE(params[0].version() > version);
  require_values(bufs[0], {1, -1});
  require_values(params[0], {0.9, 2.1});
  sgd_(params, grads, bufs, o);  // buf = 0.9 * buf + grad
  require_values(bufs[1], {3.8});
  require_values(params[1], {3 - 0.2 - 0.38});
}

TEST_CASE("adam_ counts each parameter's steps for bias correction", "[optim]") {
  std::vector<Tensor> params{values({1}, {1})};
  std::vector<Tensor> grads{values({0.5}, {1})};
  std::vector<Tensor> m(1), v(1), vmax(1);
  std::vector<Tensor> steps{zeros({}, DType::Float32)};
  AdamOptions o;
  o.lr = 0.1;
  adam_(params, grads, m, v, vmax, steps, o);
  // After one step the bias-corrected update is lr * sign(grad) (up to eps).
  require_values(params[0], {0.9}, 1e-5);
  REQUIRE(steps[0].item().to_double() == 1);
  REQUIRE(!vmax[0].defined());
  adam_(params, grads, m, v, vmax, steps, o);
  REQUIRE(steps[0].item().to_double() == 2);
  require_values(params[0], {0.8}, 1e-5);
}

TEST_CASE("optimizer calls check their arguments", "[optim][errors]") {
  std::vector<Tensor> params{values({1, 2}, {2})};
  std::vector<Tensor> bad_shape{values({1, 2, 3}, {3})};
  std::vector<Tensor> none(1);
  require_throws<Error>([&] { sgd_(params, bad_shape, none, SgdOptions{}); },
                        "sgd: grads[0] has shape [3] but its parameter has shape [2]");
  std::vector<Tensor> sums(1), no_steps;
  require_throws<ValueError>([&] { adagrad_(params, params, sums, no_steps, AdagradOptions{}); },
                             "adagrad: got 1 params but 0 steps");
}
