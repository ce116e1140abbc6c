// The matmul family from C++: values, a transposed operand read through the
// BLAS transpose flag, the 1-D cases, and gradients.
#include "catch.h"

#include <ember/ember.h>

using namespace ember;

namespace {
// [[0, 1, 2], [3, 4, 5]] as float64.
Tensor a23() { return arange(0, 6, 1, DType::Float64).view({2, 3}); }
double at(const Tensor& t, int64_t i, int64_t j) { return t.data<double>()[i * t.stride(0) + j * t.stride(1)]; }
}  // namespace

TEST_CASE("matmul: 2-D product and a transposed operand", "[matmul]") {
  const Tensor a = a23();
  const Tensor p = matmul(a, a.t());  // [[5, 14], [14, 50]]
  REQUIRE(p.shape() == Shape{2, 2});
  CHECK(at(p, 0, 0) == Approx(5));
  CHECK(at(p, 0, 1) == Approx(14));
  CHECK(at(p, 1, 1) == Approx(50));
  const Tensor q = mm(a.t(), a);  // [3, 3], q[2][2] = 4 + 25
  CHECK(at(q, 2, 2) == Approx(29));
}

TEST_CASE("matmul: vector cases and errors", "[matmul]") {
  const Tensor v = arange(0, 3, 1, DType::Float64);
  CHECK(matmul(v, v).dim() == 0);
  CHECK(matmul(v, v).item().to_double() == Approx(5));
  CHECK(matmul(a23(), v).shape() == Shape{2});
  CHECK_THROWS_AS(matmul(a23(), a23()), Error);
  CHECK_THROWS_AS(matmul(a23(), ones({3, 2})), Error);  // float64 @ float32
}

TEST_CASE("matmul: backward of a @ b", "[matmul]") {
  Tensor a = a23();
  a.requires_grad_();
  Tensor b = ones({3, 4}, DType::Float64);
  matmul(a, b).sum().backward();
  // d sum(a @ b) / da[i][k] = sum_j b[k][j] = 4
  REQUIRE(a.grad().shape() == Shape{2, 3});
  CHECK(at(a.grad(), 1, 2) == Approx(4));
}
