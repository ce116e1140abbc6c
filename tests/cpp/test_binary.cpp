// Binary elementwise ops from C++: values, broadcasting, promotion,
// non-contiguous inputs, in-place forms and errors.
#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::values;

TEST_CASE("add, sub, mul, div compute elementwise", "[binary]") {
  Tensor a = values({1, 2, 3, 4}, {2, 2});
  Tensor b = values({0.5, -1, 4, 8}, {2, 2});
  require_values(add(a, b), {1.5, 1, 7, 12});
  require_values(add(a, b, 2), {2, 0, 11, 20});
  require_values(sub(a, b), {0.5, 3, -1, -4});
  require_values(sub(a, b, 0.5), {0.75, 2.5, 1, 0});
  require_values(mul(a, b), {0.5, -2, 12, 32});
  require_values(div(a, b), {2, -2, 0.75, 0.5});
  require_values(a.add(scalar_tensor(1)), {2, 3, 4, 5});
}

TEST_CASE("binary ops broadcast their operands", "[binary][broadcast]") {
  Tensor col = values({1, 2, 3}, {3, 1});
  Tensor row = values({10, 20, 30, 40}, {4});
  Tensor s = add(col, row);
  REQUIRE(s.shape() == Shape{3, 4});
  require_values(s, {11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43});

  Tensor p = mul(values({1, 2}, {2, 1, 1}), values({1, 10, 100}, {3, 1}));
  REQUIRE(p.shape() == Shape{2, 3, 1});
  require_values(p, {1, 10, 100, 2, 20, 200});

  Tensor zero_d = values({5}, {});
  require_values(sub(zero_d, values({1, 2, 3, 4, 5, 6}, {2, 3})), {4, 3, 2, 1, 0, -1});
  Tensor empty_rows = add(zeros({0, 3}), values({1, 2, 3}, {3}));
  REQUIRE(empty_rows.shape() == Shape{0, 3});
}

TEST_CASE("binary ops accept non-contiguous inputs", "[binary][layout]") {
  Tensor m = values({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = m.t();  // [3, 2], strides [1, 3]
  require_values(add(t, t), {2, 8, 4, 10, 6, 12});
  Tensor ex = values({1, 2}, {1, 2}).expand({3, 2});
  require_values(mul(t, ex), {1, 8, 2, 10, 3, 12});
}

TEST_CASE("binary ops promote dtypes like PyTorch", "[binary][dtype]") {
  Tensor i = values({1, 2}, {2}, DType::Int64);
  Tensor f = values({1, 2}, {2}, DType::Float32);
  REQUIRE(add(i, f).dtype() == DType::Float32);
  REQUIRE(add(i, i).dtype() == DType::Int64);
  REQUIRE(div(i, i).dtype() == DType::Float32);  // true division
  require_values(div(i, values({2, 4}, {2}, DType::Int64)), {0.5, 0.5});
  REQUIRE(mul(f, values({1, 1}, {2}, DType::Float64)).dtype() == DType::Float64);
  REQUIRE(mul(values({1, 1}, {2}, DType::Float16), f).dtype() == DType::Float32);
  Tensor h = add(values({1, 2}, {2}, DType::Float16), values({0.5, 0.25}, {2}, DType::Float16));
  REQUIRE(h.dtype() == DType::Float16);  // computed in float32, stored as half
  require_values(h, {1.5, 2.25});
  REQUIRE(add(values({1, 0}, {2}, DType::Bool), scalar_tensor(1)).dtype() == DType::Int64);
}

TEST_CASE("in-place binary ops write through and check shapes", "[binary][inplace]") {
  Tensor a = values({1, 2, 3}, {3});
  a.add_(values({1, 1, 1}, {3}));
  a.mul_(scalar_tensor(2));
  require_values(a, {4, 6, 8});
  Tensor m = zeros({2, 3});
  m.add_(values({1, 2, 3}, {3}));  // the other operand broadcasts
  require_values(m, {1, 2, 3, 1, 2, 3});
  require_throws<Error>([&] { a.add_(zeros({2, 3})); }, "add_: output with shape [3]");
  Tensor n = zeros({2}, DType::Int64);
  require_throws<Error>([&] { n.add_(values({0.5, 0.5}, {2})); }, "can't be cast");
}

TEST_CASE("binary ops report bad inputs, naming the op", "[binary][errors]") {
  require_throws<Error>([] { add(zeros({2, 3}), zeros({4})); }, "add: shapes [2, 3] and [4] cannot be broadcast");
  require_throws<Error>([] { mul(zeros({2}), zeros({3})); }, "mul: shapes [2] and [3]");
  require_throws<Error>([] { sub(zeros({2}, DType::Bool), zeros({2}, DType::Bool)); }, "sub:");
  require_throws<ValueError>([] { add(Tensor(), zeros({1})); }, "add: got an undefined tensor");
}
