// The linalg family from C++: inverse and solve (batched, broadcast, vector
// right-hand sides), det/slogdet, cholesky, qr, eigh and svd reconstruct
// their input, gradients, and the errors.
#include <cmath>

#include "catch.h"
#include "util.h"

#include <ember/ember.h>

using namespace ember;
using test::require_throws;
using test::require_values;
using test::to_vector;
using test::values;

namespace {
// [[4, 1, 2], [1, 3, 0], [2, 0, 5]]: symmetric positive-definite, det 43.
Tensor spd3() { return values({4, 1, 2, 1, 3, 0, 2, 0, 5}, {3, 3}, DType::Float64); }
Tensor eye3() { return eye(3, 3, DType::Float64); }
}  // namespace

TEST_CASE("linalg: inv times A is the identity, batched and transposed", "[linalg]") {
  const Tensor a = spd3();
  require_values(matmul(linalg::inv(a), a), to_vector(eye3()), 1e-12);
  // A batch of two: A and 2 A^T (a transposed, non-contiguous view).
  const Tensor batch = stack({a, mul(a.t(), scalar_tensor(2.0))});
  const Tensor inv = linalg::inv(batch);
  REQUIRE(inv.shape() == Shape{2, 3, 3});
  require_values(matmul(inv, batch), to_vector(stack({eye3(), eye3()})), 1e-12);
  require_values(inverse(a), to_vector(linalg::inv(a)), 1e-15);
}

TEST_CASE("linalg: solve with matrix, vector and broadcast right-hand sides", "[linalg]") {
  const Tensor a = spd3();
  const Tensor x = values({1, -2, 3}, {3}, DType::Float64);
  const Tensor b = matmul(a, x);
  require_values(linalg::solve(a, b), {1, -2, 3}, 1e-12);                  // vector
  const Tensor B = stack({b, mul(b, scalar_tensor(2.0))}, 1);             // [3, 2]
  require_values(linalg::solve(a, B), {1, 2, -2, -4, 3, 6}, 1e-12);
  const Tensor many = expand(unsqueeze(B, 0), {4, 3, 2});                 // batch of B, one A
  REQUIRE(linalg::solve(a, many).shape() == Shape{4, 3, 2});
  // X A = B^T (left = false): X = B^T A^-1.
  const Tensor right = linalg::solve(a, B.t(), /*left=*/false);
  require_values(matmul(right, a), to_vector(B.t()), 1e-12);
}

TEST_CASE("linalg: solve_triangular reads one triangle", "[linalg]") {
  const Tensor L = linalg::cholesky(spd3());
  const Tensor B = values({1, 2, 3, 4, 5, 6}, {3, 2}, DType::Float64);
  // L^T's zero upper part is filled with garbage that must not be read.
  const Tensor garbage = add(L, triu(ones({3, 3}, DType::Float64), 1));
  const Tensor X = linalg::solve_triangular(garbage, B, /*upper=*/false);
  require_values(matmul(L, X), to_vector(B), 1e-12);
  const Tensor Y = linalg::solve_triangular(L.t(), B.t(), /*upper=*/true, /*left=*/false);  // Y L^T = B^T
  require_values(matmul(Y, L.t()), to_vector(B.t()), 1e-12);
}

TEST_CASE("linalg: lu and lu_solve", "[linalg]") {
  const Tensor a = values({0, 2, 1, 1, 1, 0, 3, 0, 4}, {3, 3}, DType::Float64);  // a[0][0] = 0: needs row swaps
  auto [P, L, U] = linalg::lu(a);
  require_values(matmul(matmul(P, L), U), to_vector(a), 1e-12);
  auto [LU, pivots] = linalg::lu_factor(a);
  CHECK(pivots.dtype() == DType::Int32);
  const Tensor b = values({1, 2, 3}, {3, 1}, DType::Float64);
  require_values(matmul(a, linalg::lu_solve(LU, pivots, b)), to_vector(b), 1e-12);
  require_values(matmul(a.t(), linalg::lu_solve(LU, pivots, b, true, /*adjoint=*/true)), to_vector(b), 1e-12);
}

TEST_CASE("linalg: det, slogdet and logdet", "[linalg]") {
  CHECK(linalg::det(spd3()).item().to_double() == Approx(43));
  const Tensor swap = values({0, 1, 1, 0}, {2, 2}, DType::Float64);
  CHECK(det(swap).item().to_double() == Approx(-1));
  auto [sign, logabsdet] = linalg::slogdet(swap);
  CHECK(sign.item().to_double() == -1);
  CHECK(logabsdet.item().to_double() == Approx(0).margin(1e-15));
  CHECK(std::isnan(logdet(swap).item().to_double()));
  CHECK(logdet(spd3()).item().to_double() == Approx(std::log(43.0)));
}

TEST_CASE("linalg: cholesky, qr, eigh and svd reconstruct A", "[linalg]") {
  const Tensor a = spd3();
  const Tensor L = linalg::cholesky(a);
  require_values(matmul(L, L.t()), to_vector(a), 1e-12);
  CHECK(to_vector(L)[1] == 0.0);  // upper triangle zeroed
  auto [Q, R] = linalg::qr(a);
  require_values(matmul(Q, R), to_vector(a), 1e-12);
  auto [w, V] = linalg::eigh(a);
  require_values(matmul(mul(V, unsqueeze(w, 0)), V.t()), to_vector(a), 1e-12);
  const std::vector<double> ws = to_vector(w);
  CHECK(ws[0] < ws[1]);
  CHECK(ws[1] < ws[2]);
  const Tensor wide = values({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float64);
  auto [U, S, Vh] = linalg::svd(wide, /*full_matrices=*/false);
  REQUIRE(U.shape() == Shape{2, 2});
  REQUIRE(Vh.shape() == Shape{2, 3});
  require_values(matmul(mul(U, unsqueeze(S, 0)), Vh), to_vector(wide), 1e-12);
  require_values(linalg::svdvals(wide), to_vector(S), 1e-12);
}

TEST_CASE("linalg: gradient of sum(inv(A)) and of solve", "[linalg]") {
  Tensor a = spd3();
  a.requires_grad_();
  linalg::inv(a).sum().backward();
  // d sum(A^-1) = -sum(A^-1 dA A^-1): gA = -A^-T 1 1^T A^-T.
  const Tensor it = linalg::inv(spd3()).t();
  const Tensor ones33 = ones({3, 3}, DType::Float64);
  require_values(a.grad(), to_vector(neg(matmul(matmul(it, ones33), it))), 1e-12);
  Tensor b = values({1, 2, 3}, {3, 1}, DType::Float64);
  b.requires_grad_();
  linalg::solve(spd3(), b).sum().backward();
  require_values(b.grad(), to_vector(linalg::solve(spd3().t(), ones({3, 1}, DType::Float64))), 1e-12);
}

TEST_CASE("linalg: errors name the op", "[linalg]") {
  require_throws<Error>([] { linalg::inv(ones({2, 3}, DType::Float64)); },
                        "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices");
  require_throws<Error>([] { linalg::inv(values({1, 2, 2, 4}, {2, 2}, DType::Float64)); },
                        "The diagonal element 2 is zero");
  require_throws<Error>([] { linalg::solve(values({1, 2, 2, 4}, {2, 2}, DType::Float64), ones({2, 1}, DType::Float64)); },
                        "linalg.solve: The solver failed because the input matrix is singular");
  require_throws<Error>([] { linalg::cholesky(values({1, 0, 0, -1}, {2, 2}, DType::Float64)); },
                        "the leading minor of order 2 is not positive-definite");
  require_throws<Error>([] { linalg::det(ones({2, 2}, DType::Int64)); }, "linalg.det");
  require_throws<ValueError>([] { linalg::qr(spd3(), "full"); }, "linalg.qr");
}
