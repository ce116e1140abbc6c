// The composite ops from C++: einsum (contractions, diagonals, ellipsis,
// gradients, errors) and a few of the others (tensordot, repeat_interleave,
// movedim, cross, aminmax, cdist).
#include "catch.h"
#include "util.h"

#include <ember/ember.h>

using namespace ember;
using test::require_throws;
using test::require_values;
using test::values;

namespace {
// [[0, 1, 2], [3, 4, 5]] as float64.
Tensor a23() { return arange(0, 6, 1, DType::Float64).view({2, 3}); }
}  // namespace

TEST_CASE("einsum: matrix products, implicit and explicit", "[composites]") {
  const Tensor a = a23();
  const Tensor b = arange(0, 12, 1, DType::Float64).view({3, 4});
  const Tensor expected = matmul(a, b);
  REQUIRE(einsum("ij,jk", {a, b}).shape() == Shape{2, 4});
  require_values(einsum("ij,jk", {a, b}), test::to_vector(expected));
  require_values(einsum("ij,jk->ik", {a, b}), test::to_vector(expected));
  require_values(einsum("ij,jk->ki", {a, b}), test::to_vector(expected.t()));
  // Three operands, contracted left to right: (a @ b) @ c.
  const Tensor c = ones({4, 2}, DType::Float64);
  require_values(einsum("ij,jk,kl->il", {a, b, c}), test::to_vector(matmul(expected, c)));
}

TEST_CASE("einsum: diagonals, traces, sums and the ellipsis", "[composites]") {
  const Tensor m = arange(0, 9, 1, DType::Float64).view({3, 3});
  require_values(einsum("ii->i", {m}), {0, 4, 8});
  require_values(einsum("ii", {m}), {12});
  require_values(einsum("ij->", {a23()}), {15});
  require_values(einsum("ij->j", {a23()}), {3, 5, 7});
  // '...' broadcasts: a batch of 2 against one matrix.
  const Tensor batch = arange(0, 12, 1, DType::Float64).view({2, 2, 3});
  const Tensor r = einsum("...ij,jk", {batch, ones({3, 1}, DType::Float64)});
  REQUIRE(r.shape() == Shape{2, 2, 1});
  require_values(r, {3, 12, 21, 30});
  // Outer product: no contraction.
  require_values(einsum("i,j", {values({1, 2}, {2}), values({3, 4, 5}, {3})}), {3, 4, 5, 6, 8, 10});
}

TEST_CASE("einsum: gradients of a contraction and a diagonal", "[composites]") {
  Tensor a = a23();
  a.requires_grad_();
  Tensor b = ones({3, 4}, DType::Float64);
  einsum("ij,jk->ik", {a, b}).sum().backward();
  require_values(a.grad(), {4, 4, 4, 4, 4, 4});  // sum_k b[j][k] = 4
  Tensor m = ones({3, 3}, DType::Float64);
  m.requires_grad_();
  einsum("ii", {m}).backward();
  require_values(m.grad(), {1, 0, 0, 0, 1, 0, 0, 0, 1});
}

TEST_CASE("einsum: errors name the equation and the shapes", "[composites]") {
  const Tensor a = ones({2, 3}), b = ones({4, 4});
  require_throws<Error>([&] { einsum("ij,jk", {a, b}); }, "einsum: subscript j has size 4 for operand 1");
  require_throws<Error>([&] { einsum("ij,jk", {a, b}); }, "equation 'ij,jk', operand shapes [2, 3], [4, 4]");
  require_throws<Error>([&] { einsum("ij,jk->ik", {a}); }, "fewer operands");
  require_throws<Error>([&] { einsum("ijk", {a}); }, "does not match the number of dimensions (2) for operand 0");
  require_throws<Error>([&] { einsum("ij->k", {a}); }, "output subscript k does not appear");
  require_throws<Error>([&] { einsum("i1", {a}); }, "invalid subscript given at index 1");
  require_throws<Error>([&] { einsum("ij", {}); }, "einsum: must specify");
}

TEST_CASE("composites: tensordot, repeat_interleave, movedim", "[composites]") {
  const Tensor a = a23();
  require_values(tensordot(a, a, 2), {55});
  REQUIRE(tensordot(a, a, {0}, {0}).shape() == Shape{3, 3});
  require_values(repeat_interleave(values({1, 2, 3}, {3}), values({0, 2, 1}, {3}, DType::Int64)), {2, 2, 3});
  require_values(repeat_interleave(values({1, 2}, {2}), 2), {1, 1, 2, 2});
  const Tensor moved = movedim(ones({2, 3, 4}), {0}, {-1});
  REQUIRE(moved.shape() == Shape{3, 4, 2});
  require_throws<Error>([&] { movedim(ones({2, 3}), {0, 0}, {0, 1}); }, "movedim: repeated dim in `source`");
}

TEST_CASE("composites: cross, aminmax, cdist", "[composites]") {
  require_values(linalg_cross(values({1, 0, 0}, {3}), values({0, 1, 0}, {3})), {0, 0, 1});
  auto [lo, hi] = aminmax(values({3, -1, 2, 5}, {2, 2}), 1);
  require_values(lo, {-1, 2});
  require_values(hi, {3, 5});
  const Tensor d = cdist(values({0, 0, 3, 4}, {2, 2}), values({0, 0}, {1, 2}));
  require_values(d, {0, 5});
  require_throws<ValueError>([&] { cdist(ones({2, 2}), ones({2, 2}), 2.0, "fast"); }, "cdist: fast is not a valid");
}

TEST_CASE("composites: undefined tensors are refused by name", "[composites]") {
  const Tensor none;
  require_throws<ValueError>([&] { movedim(none, {0}, {0}); }, "movedim: got an undefined tensor");
  require_throws<ValueError>([&] { hsplit(none, 2); }, "hsplit: got an undefined tensor");
  require_throws<ValueError>([&] { repeat_interleave(none, 2); }, "repeat_interleave: got an undefined tensor");
  require_throws<ValueError>([&] { einsum("i", {none}); }, "einsum: operand 0 is an undefined tensor");
  require_throws<ValueError>([&] { cdist(none, ones({2, 2})); }, "cdist: got an undefined tensor");
}
