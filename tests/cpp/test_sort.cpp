// The sort family from C++: sort / argsort / topk / msort through ember.h,
// NaN placement, stable ties, structured bindings, gradients and errors.
#include <cmath>
#include <limits>

#include <ember/ember.h>

#include "util.h"

using namespace ember;
using ember::test::require_throws;
using ember::test::require_values;
using ember::test::to_vector;
using ember::test::values;

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("sort and argsort: NaN last (first descending), stable ties", "[sort]") {
  const Tensor x = values({3, kNaN, 1, -0.0, 0.0, kInf, -kInf, 1}, {8});
  auto [v, i] = sort(x);
  REQUIRE(i.dtype() == DType::Int64);
  require_values(i, {6, 3, 4, 2, 7, 0, 5, 1});
  const std::vector<double> sorted = to_vector(v);
  REQUIRE(std::signbit(sorted[1]));  // the input's -0.0, then its 0.0
  REQUIRE(std::isnan(sorted[7]));
  require_values(argsort(x, -1, /*descending=*/true), {1, 5, 0, 2, 7, 3, 4, 6});
  // Every dtype: int8 with its extremes, float16 through float32.
  require_values(argsort(values({0, 127, -128, 1, -128}, {5}, DType::Int8)), {2, 4, 0, 3, 1});
  require_values(std::get<0>(sort(values({2, -1, 0.5}, {3}, DType::Float16), 0, true)), {2, 0.5, -1});
}

TEST_CASE("sort along a middle dim and msort", "[sort]") {
  const Tensor x = values({5, 1, 2, 2, 0, 9, 1, 4}, {2, 2, 2});
  auto [v, i] = sort(x, 1, /*descending=*/true, /*stable=*/true);
  REQUIRE(v.shape() == Shape{2, 2, 2});
  require_values(v, {5, 2, 2, 1, 1, 9, 0, 4});
  require_values(i, {0, 1, 1, 0, 1, 0, 0, 1});
  require_values(msort(values({3, 1, 2, 0}, {2, 2})), {2, 0, 3, 1});
}

TEST_CASE("topk: largest and smallest, small and large k, gradients", "[sort]") {
  const Tensor x = values({4, 8, 1, 8, 3, 5}, {6}).requires_grad_();
  auto [v, i] = topk(x, 3);
  require_values(v, {8, 8, 5});
  require_values(i, {1, 3, 5});  // ties in input order
  auto [s, si] = topk(x, 2, 0, /*largest=*/false);
  require_values(s, {1, 3});
  require_values(si, {2, 4});
  mul(v, values({1, 2, 3}, {3})).sum().backward();
  require_values(x.grad(), {0, 1, 0, 2, 0, 3});
  // A long row takes the heap path: the answer is the same as a full sort's.
  std::vector<double> periodic(1000);
  for (size_t j = 0; j < periodic.size(); ++j) periodic[j] = static_cast<double>(j % 7);
  const Tensor long_row = values(periodic, {1000});
  auto [lv, li] = topk(long_row, 10);
  auto [fv, fi] = sort(long_row, -1, true);
  require_values(li, to_vector(fi.narrow(0, 0, 10)));
  require_values(lv, to_vector(fv.narrow(0, 0, 10)));
}

TEST_CASE("sort family errors name the op", "[sort]") {
  const Tensor x = zeros({8});
  require_throws<Error>([&] { topk(x, 9); }, "topk: selected index k (9) out of range for dimension 0 of size 8");
  require_throws<IndexError>([&] { sort(x, 1); }, "sort: dimension out of range");
  require_throws<IndexError>([&] { argsort(x, -2); }, "argsort: dimension out of range");
  require_throws<NotImplementedError>([&] { topk(values({1, 0}, {2}, DType::Bool), 1); }, "topk: not implemented for bool");
}
