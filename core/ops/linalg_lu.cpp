// The linalg family's LU front-ends: lu_factor(_ex), lu and lu_solve, with
// partial pivoting as LAPACK's getrf (P A = L U). The permutation matrix P is
// built on the host from the pivots: only lu and the backward formulas need it.
#include <ember/core/ops/linalg.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include <ember/autograd/functions/linalg.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/linalg_detail.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>

namespace ember::linalg {

namespace functions = autograd::functions;
using namespace detail;

namespace {

void check_pivot(const char* op, bool pivot) {
  EMBER_CHECK(pivot, NotImplementedError, op, ": LU without pivoting is not implemented");
}

// P [batch..., m, m] with A = P L U, from getrf's 1-based pivots [batch..., k]:
// applying the row swaps in order to 0..m-1 gives perm with (P^T A)[i] = A[perm[i]].
Tensor permutation_matrices(const Tensor& pivots, int64_t m, DType dtype, Device device) {
  const Tensor piv = pivots.cpu().contiguous();
  const int64_t k = piv.size(piv.dim() - 1);
  Shape shape(piv.shape().begin(), piv.shape().end() - 1);
  const int64_t batch = numel_of(shape);
  shape.push_back(m);
  shape.push_back(m);
  Tensor P = zeros(shape, DType::Float64, kCPU);
  double* p = P.data<double>();
  const int32_t* s = piv.data<int32_t>();
  std::vector<int64_t> perm(m);
  for (int64_t b = 0; b < batch; ++b) {
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t j = s[b * k + i] - 1;
      EMBER_CHECK(j >= i && j < m, Error, "linalg.lu: pivot ", j + 1, " of row ", i + 1, " is out of range for ", m,
                  " rows");
      std::swap(perm[i], perm[j]);
    }
    for (int64_t i = 0; i < m; ++i) p[b * m * m + perm[i] * m + i] = 1.0;
  }
  return P.to(device, dtype);
}

// L (unit lower, [m, k]) and U (upper, [k, n]) out of getrf's compact LU.
std::pair<Tensor, Tensor> unpack(const Tensor& LU) {
  const int64_t m = LU.size(LU.dim() - 2), n = LU.size(LU.dim() - 1), k = std::min(m, n);
  const Tensor L = add(tril(narrow(LU, -1, 0, k), -1), eye(m, k, LU.dtype(), LU.device()));
  const Tensor U = triu(narrow(LU, -2, 0, k));
  return {L, U};
}

std::tuple<Tensor, Tensor, Tensor> factor(const char* op, const Tensor& A, bool pivot, bool check_errors) {
  check_matrix(op, A, false);
  check_pivot(op, pivot);
  LU f;
  {
    autograd::NoGradGuard no_grad;
    f = lu_factor_of(A, batch_shape(A));
    if (check_errors) check_info(op, f.info, Failure::LuSingular);
  }
  if (autograd::any_requires_grad({A})) {
    Tensor L, U, P;
    {
      autograd::NoGradGuard no_grad;
      std::tie(L, U) = unpack(f.lu);
      P = permutation_matrices(f.pivots, A.size(A.dim() - 2), A.dtype(), A.device());
    }
    autograd::record("LinalgLuFactorExBackward0", {A}, {f.lu}, {L, U, P}, functions::lu_backward(/*compact=*/true));
  }
  return {f.lu, f.pivots, f.info};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  return factor("linalg.lu_factor_ex", A, pivot, check_errors);
}

std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot) {
  auto [LU, pivots, info] = factor("linalg.lu_factor", A, pivot, true);
  return {LU, pivots};
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot) {
  const char* op = "linalg.lu";
  check_matrix(op, A, false);
  check_pivot(op, pivot);
  Tensor P, L, U;
  {
    autograd::NoGradGuard no_grad;
    const LU f = lu_factor_of(A, batch_shape(A));
    std::tie(L, U) = unpack(f.lu);
    P = permutation_matrices(f.pivots, A.size(A.dim() - 2), A.dtype(), A.device());
  }
  if (autograd::any_requires_grad({A})) {
    autograd::record("LinalgLuBackward0", {A}, {L, U}, {L, U, P}, functions::lu_backward(/*compact=*/false));
  }
  return {P, L, U};
}

Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_matrix(op, LU, true);
  EMBER_CHECK(pivots.defined() && B.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(pivots.dtype() == DType::Int32, Error, op, ": pivots must be int32 (as lu_factor returns them), got ",
              dtype_name(pivots.dtype()));
  EMBER_CHECK(B.dim() >= 2, Error, op, ": The input tensor B must have at least 2 dimensions, got shape ",
              B.shape_str());
  EMBER_CHECK(LU.dtype() == B.dtype(), Error, op, ": Expected LU and B to have the same dtype, but found LU of type ",
              dtype_name(LU.dtype()), " and B of type ", dtype_name(B.dtype()), " instead");
  common_device(op, {LU, pivots, B});
  if (!left) {  // X A = B  <=>  A^T X^T = B^T
    return transpose(lu_solve(LU, pivots, transpose(B, -2, -1), true, !adjoint), -2, -1);
  }
  const int64_t n = LU.size(LU.dim() - 1);
  const Shape lu_batch = batch_shape(LU);
  Shape piv_expected = lu_batch;
  piv_expected.push_back(n);
  EMBER_CHECK(pivots.shape() == piv_expected, Error, op, ": expected pivots of shape ", shape_str(piv_expected),
              " for LU of shape ", LU.shape_str(), ", got ", pivots.shape_str());
  EMBER_CHECK(B.size(B.dim() - 2) == n, Error, op, ": Incompatible shapes of A and B for the equation AX = B (", n,
              "x", n, " and ", B.size(B.dim() - 2), "x", B.size(B.dim() - 1), ")");
  {  // getrs swaps row i with row pivots[i] - 1 unchecked: an out-of-range pivot would write outside X
    const Tensor piv = pivots.cpu().contiguous();
    const int32_t* p = piv.data<int32_t>();
    for (int64_t i = 0; i < piv.numel(); ++i) {
      EMBER_CHECK(p[i] >= 1 && p[i] <= n, Error, op, ": pivots must lie in [1, ", n,
                  "] (LU.size(-2), 1-based as lu_factor returns them), got ", p[i], " at position ", i);
    }
  }
  const Shape batch = broadcast_shapes(lu_batch, batch_shape(B), op);
  const int64_t k = B.size(B.dim() - 1);
  Tensor X;
  {
    autograd::NoGradGuard no_grad;
    const Tensor lu = column_major(LU, batch);
    Shape piv_shape = batch;
    piv_shape.push_back(n);
    const Tensor piv = expand(pivots, piv_shape).contiguous();
    X = column_major(expand(B, with_matrix(batch, n, k)), batch);
    if (X.numel() > 0 && lu.numel() > 0) kernel::lu_solve(lu, piv, X, adjoint);
  }
  if (autograd::any_requires_grad({LU, B})) {
    Tensor L, U, P;
    if (LU.requires_grad()) {  // the formula for LU's gradient needs the factors and P
      autograd::NoGradGuard no_grad;
      std::tie(L, U) = unpack(LU.detach());
      P = permutation_matrices(pivots, n, LU.dtype(), LU.device());
    }
    autograd::record("LinalgLuSolveBackward0", {LU, B}, {X}, {LU, pivots, X, L, U, P},
                     functions::lu_solve_backward(adjoint));
  }
  return X;
}

}  // namespace ember::linalg
