// The unary family through the C++ API: values, dtype rules, the in-place
// fast path, autograd and errors.
#include <cmath>
#include <vector>

#include <ember/ember.h>

#include "catch.h"

using namespace ember;

namespace {
std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(DType::Float64).contiguous();
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}
}  // namespace

TEST_CASE("unary: values and dtypes", "[unary]") {
  Tensor x = arange(-2, 3);  // int64 [-2, -1, 0, 1, 2]
  CHECK(exp(x).dtype() == DType::Float32);
  CHECK(abs(x).dtype() == DType::Int64);
  CHECK(values(abs(x)) == std::vector<double>{2, 1, 0, 1, 2});
  CHECK(values(relu(x)) == std::vector<double>{0, 0, 0, 1, 2});
  CHECK(values(pow(x, 2)) == std::vector<double>{4, 1, 0, 1, 4});
  CHECK(values(clamp(x, Scalar(-1), Scalar(1))) == std::vector<double>{-1, -1, 0, 1, 1});
  const auto e = values(exp(x.to(DType::Float64)));
  for (size_t i = 0; i < e.size(); ++i) CHECK(e[i] == Approx(std::exp(static_cast<double>(i) - 2)));
  CHECK(values(pow(Scalar(2.0), x)) == std::vector<double>{0.25, 0.5, 1, 2, 4});
}

TEST_CASE("unary: in place without autograd writes into self", "[unary]") {
  Tensor x = full({4}, -1.5);
  void* data = x.data_ptr();
  const uint32_t version = x.version();
  x.relu_();
  CHECK(x.data_ptr() == data);
  CHECK(x.version() == version + 1);
  CHECK(values(x) == std::vector<double>{0, 0, 0, 0});
  CHECK_THROWS_AS(arange(0, 3).exp_(), Error);  // float result into an int64 tensor
}

TEST_CASE("unary: backward", "[unary]") {
  Tensor x = full({3}, 0.5, DType::Float64);
  x.requires_grad_(true);
  Tensor y = sigmoid(x);
  sum(y).backward();
  const double s = 1.0 / (1.0 + std::exp(-0.5));
  for (double g : values(x.grad())) CHECK(g == Approx(s * (1 - s)));
}

TEST_CASE("unary: errors name the op", "[unary]") {
  try {
    clamp(ones({2}), std::nullopt, std::nullopt);
    FAIL("clamp without bounds did not throw");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).rfind("clamp:", 0) == 0);
  }
  CHECK_THROWS_AS(gelu(ones({2}), "fast"), Error);
  CHECK_THROWS_AS(neg(ones({2}, DType::Bool)), Error);
}
