// The linalg family's front-ends for the LU-based functions (inv, solve,
// det, slogdet), cholesky and matrix_power, plus the helpers every linalg
// front-end shares (linalg_detail.h). QR, eigh and SVD are in
// linalg_decomp.cpp. Each op copies its input into the column-major batch
// the kernels factor in place, calls cpu:: or cuda::, checks the info codes
// and records its backward (autograd/functions/linalg.cpp).
#include <ember/core/ops/linalg.h>

#include <cmath>
#include <limits>
#include <vector>

#include <ember/autograd/functions/linalg.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/linalg.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/float_checks.h>
#include <ember/core/ops/linalg_detail.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/unary.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/linalg.h>

namespace ember::linalg {

namespace functions = autograd::functions;

namespace detail {

void check_matrix(const char* op, const Tensor& A, bool square) {
  EMBER_CHECK(A.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(A.dim() >= 2, Error, op, ": The input tensor A must have at least 2 dimensions, got shape ",
              A.shape_str());
  const DType dt = A.dtype();
  EMBER_CHECK(!is_half(dt), Error, op, ": Low precision dtypes not supported. Got ", dtype_name(dt));
  EMBER_CHECK(dt == DType::Float32 || dt == DType::Float64, Error, op,
              ": Expected a floating point tensor as input. Got ", dtype_name(dt));
  if (square) {
    EMBER_CHECK(A.size(A.dim() - 1) == A.size(A.dim() - 2), Error, op,
                ": A must be batches of square matrices, but they are ", A.size(A.dim() - 2), " by ",
                A.size(A.dim() - 1), " matrices (shape ", A.shape_str(), ")");
  }
  EMBER_CHECK(A.device().is_cuda() || cpu::has_lapack(), Error, op,
              ": ember was built without LAPACK (the linked BLAS has none), so linear algebra is unavailable on "
              "the CPU; rebuild it with OpenBLAS (pip install scipy-openblas32, or the system's libopenblas-dev)");
}

Shape batch_shape(const Tensor& A) { return Shape(A.shape().begin(), A.shape().end() - 2); }

Tensor column_major_empty(const Shape& batch, int64_t rows, int64_t cols, DType dtype, Device device) {
  Shape stored = batch;
  stored.push_back(cols);
  stored.push_back(rows);
  return transpose(empty(stored, dtype, device), -2, -1);
}

Tensor column_major(const Tensor& t, const Shape& batch) {
  autograd::NoGradGuard no_grad;
  const int64_t rows = t.size(t.dim() - 2), cols = t.size(t.dim() - 1);
  Tensor out = column_major_empty(batch, rows, cols, t.dtype(), t.device());
  copy_(out, t);  // broadcasts t's batch dims
  return out;
}

Tensor diagonal_view(const Tensor& m) {
  const int64_t nd = m.dim(), n = std::min(m.size(nd - 2), m.size(nd - 1));
  Shape shape(m.shape().begin(), m.shape().end() - 2);
  Strides strides(m.strides().begin(), m.strides().end() - 2);
  shape.push_back(n);
  strides.push_back(m.stride(nd - 2) + m.stride(nd - 1));
  return make_view(m, shape, strides, m.storage_offset());
}

Tensor first_flagged(const Tensor& flags) {
  const Tensor f = flags.to(DType::Int64);
  return mul(add(argmax(f, -1), ones({}, DType::Int64, f.device())), amax(f, {-1})).to(DType::Int32);
}

void check_info(const char* op, const Tensor& info, Failure failure) {
  if (info.numel() == 0) return;
  const Tensor host = info.device().is_cuda() ? info.cpu() : info;
  const int32_t* codes = host.data<int32_t>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    const int32_t code = codes[i];
    if (code == 0) continue;
    const std::string where = info.dim() > 0 ? str("(Batch element ", i, "): ") : std::string();
    EMBER_CHECK(code > 0, Error, op, ": ", where, "argument ", -code, " of the LAPACK call had an illegal value");
    switch (failure) {
      case Failure::Singular:
        throw Error(str(op, ": ", where, "The diagonal element ", code,
                        " is zero, the inversion could not be completed because the input matrix is singular."));
      case Failure::SolveSingular:
        throw Error(str(op, ": ", where, "The solver failed because the input matrix is singular (the diagonal "
                        "element ", code, " of its LU factorization is zero)."));
      case Failure::LuSingular:
        throw Error(str(op, ": ", where, "U[", code, ",", code, "] is zero and using it on lu_solve would result in a "
                        "division by zero. If you still want to perform the factorization, consider calling "
                        "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"));
      case Failure::NotPositiveDefinite:
        throw Error(str(op, ": ", where, "The factorization could not be completed because the input is not "
                        "positive-definite (the leading minor of order ", code, " is not positive-definite)."));
      case Failure::NoConvergence:
        throw Error(str(op, ": ", where, "The algorithm failed to converge because the input matrix is "
                        "ill-conditioned or has too many repeated eigenvalues (error code: ", code, ")."));
      case Failure::NoConvergenceSvd:
        throw Error(str(op, ": ", where, "The algorithm failed to converge because the input matrix is "
                        "ill-conditioned or has too many repeated singular values (error code: ", code, ")."));
    }
  }
}

namespace kernel {
void lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info) {
  a.device().is_cuda() ? cuda::lu_factor(a, pivots, info) : cpu::lu_factor(a, pivots, info);
}
void lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool transpose) {
  lu.device().is_cuda() ? cuda::lu_solve(lu, pivots, b, transpose) : cpu::lu_solve(lu, pivots, b, transpose);
}
void cholesky(const Tensor& a, bool upper, const Tensor& info) {
  a.device().is_cuda() ? cuda::cholesky(a, upper, info) : cpu::cholesky(a, upper, info);
  // OpenBLAS's and cuSOLVER's potrf may let NaN through where LAPACK's
  // reference stops: the first NaN pivot fails the factorization, as the
  // order of that minor, on both devices.
  const Tensor nan_at = first_flagged(isnan(diagonal_view(a)));
  Tensor(info).copy_(where(eq(info, zeros({}, DType::Int32, info.device())), nan_at, info));
}
void triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool unitriangular) {
  a.device().is_cuda() ? cuda::triangular_solve(a, b, upper, unitriangular)
                       : cpu::triangular_solve(a, b, upper, unitriangular);
}
void geqrf(const Tensor& a, const Tensor& tau) {
  a.device().is_cuda() ? cuda::geqrf(a, tau) : cpu::geqrf(a, tau);
}
void orgqr(const Tensor& q, const Tensor& tau) {
  q.device().is_cuda() ? cuda::orgqr(q, tau) : cpu::orgqr(q, tau);
}
void eigh(const Tensor& a, const Tensor& w, bool upper, bool vectors, const Tensor& info) {
  a.device().is_cuda() ? cuda::eigh(a, w, upper, vectors, info) : cpu::eigh(a, w, upper, vectors, info);
}
void svd(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vh, bool full, bool vectors,
         const Tensor& info) {
  a.device().is_cuda() ? cuda::svd(a, u, s, vh, full, vectors, info) : cpu::svd(a, u, s, vh, full, vectors, info);
}
}  // namespace kernel

Shape with_matrix(Shape batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

Tensor int32_empty(const Shape& shape, Device device) { return empty(shape, DType::Int32, device); }

LU lu_factor_of(const Tensor& A, const Shape& batch) {
  const int64_t k = std::min(A.size(A.dim() - 2), A.size(A.dim() - 1));
  LU f;
  f.lu = column_major(A, batch);
  Shape piv_shape = batch;
  piv_shape.push_back(k);
  f.pivots = int32_empty(piv_shape, A.device());
  f.info = int32_empty(batch, A.device());
  if (f.lu.numel() > 0) {
    kernel::lu_factor(f.lu, f.pivots, f.info);
  } else {
    f.info.zero_();
  }
  return f;
}

}  // namespace detail

using namespace detail;

namespace {

// X with A X = B for B [batch..., n, k] (no autograd). Singular matrices
// raise, unless `info` is given: it then receives the codes unchecked.
Tensor solve_matrices(const char* op, const Tensor& A, const Tensor& B, const Shape& batch, Failure failure,
                      Tensor* info = nullptr) {
  const LU f = lu_factor_of(A, batch);
  if (info) {
    *info = f.info;
  } else if (f.lu.numel() > 0) {
    check_info(op, f.info, failure);
  }
  Tensor X = column_major(B, batch);
  if (X.numel() > 0 && f.lu.numel() > 0) kernel::lu_solve(f.lu, f.pivots, X, false);
  return X;
}

// (-1)^(number of row swaps) from LAPACK's 1-based pivots, in A's dtype.
Tensor permutation_sign(const Tensor& pivots, DType dtype) {
  const int64_t n = pivots.size(pivots.dim() - 1);
  const Tensor identity = arange(1, n + 1, 1, DType::Int32, pivots.device());
  const Tensor swaps = sum(ne(pivots, identity), {-1});
  const Tensor odd = remainder(swaps, scalar_tensor(2));
  return sub(scalar_tensor(1.0), mul(odd.to(dtype), scalar_tensor(2.0)));
}

}  // namespace

std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors) {
  check_matrix("linalg.inv_ex", A, true);
  const int64_t n = A.size(A.dim() - 1);
  const Shape batch = batch_shape(A);
  Tensor X, info;
  {
    autograd::NoGradGuard no_grad;
    const Tensor identity = expand(eye(n, n, A.dtype(), A.device()), with_matrix(batch, n, n));
    X = solve_matrices("linalg.inv_ex", A, identity, batch, Failure::Singular, &info);
    if (check_errors) check_info("linalg.inv_ex", info, Failure::Singular);
  }
  if (autograd::any_requires_grad({A})) {
    autograd::record("LinalgInvExBackward0", {A}, {X}, {X}, functions::inv_backward());
  }
  return {X, info};
}

Tensor inv(const Tensor& A) {
  check_matrix("linalg.inv", A, true);
  auto [X, info] = inv_ex(A, false);
  check_info("linalg.inv", info, Failure::Singular);
  return X;
}

namespace {
Tensor solve_matrix_rhs(const char* op, const Tensor& A, const Tensor& B);
}  // namespace

Tensor solve(const Tensor& A, const Tensor& B, bool left) {
  const char* op = "linalg.solve";
  check_matrix(op, A, true);
  EMBER_CHECK(B.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(A.dtype() == B.dtype(), Error, op, ": Expected A and B to have the same dtype, but found A of type ",
              dtype_name(A.dtype()), " and B of type ", dtype_name(B.dtype()), " instead");
  common_device(op, {A, B});
  // B is a (batch of) vector(s) when it is 1-D or has A's shape without the
  // last dim (AX = B only, as in torch).
  const Shape a_rows(A.shape().begin(), A.shape().end() - 1);
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.shape() == a_rows);
  if (vector) {
    EMBER_CHECK(left, Error, op, ": Vector broadcasting of the left hand side is not supported for left=False. "
                "In this case linalg.solve is equivalent to B / A.squeeze(-1)");
    return squeeze(solve(A, unsqueeze(B, -1), true), -1);
  }
  if (!left) {
    EMBER_CHECK(B.dim() >= 2 && B.size(B.dim() - 1) == A.size(A.dim() - 1), Error, op,
                ": Incompatible shapes of A and B for the equation XA = B (", A.size(A.dim() - 2), "x",
                A.size(A.dim() - 1), " and ", B.shape_str(), ")");
    return transpose(solve_matrix_rhs(op, transpose(A, -2, -1), transpose(B, -2, -1)), -2, -1);
  }
  return solve_matrix_rhs(op, A, B);
}

namespace {
// AX = B for a (batch of) matrix B.
Tensor solve_matrix_rhs(const char* op, const Tensor& A, const Tensor& B) {
  const int64_t n = A.size(A.dim() - 1);
  EMBER_CHECK(B.dim() >= 2 && B.size(B.dim() - 2) == n, Error, op,
              ": Incompatible shapes of A and B for the equation AX = B (", A.size(A.dim() - 2), "x", n, " and ",
              B.dim() >= 2 ? str(B.size(B.dim() - 2), "x", B.size(B.dim() - 1)) : B.shape_str(), ")");
  const Shape batch = broadcast_shapes(batch_shape(A), batch_shape(B), op);
  const int64_t k = B.size(B.dim() - 1);
  Tensor X;
  {
    autograd::NoGradGuard no_grad;
    X = solve_matrices(op, A, expand(B, with_matrix(batch, n, k)), batch, Failure::SolveSingular);
  }
  if (autograd::any_requires_grad({A, B})) {
    autograd::record("LinalgSolveExBackward0", {A, B}, {X}, {A, X}, functions::solve_backward());
  }
  return X;
}
}  // namespace

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  check_matrix(op, A, true);
  EMBER_CHECK(B.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(B.dim() >= 2, Error, op, ": The input tensor B must have at least 2 dimensions, got shape ",
              B.shape_str());
  EMBER_CHECK(A.dtype() == B.dtype(), Error, op, ": Expected A and B to have the same dtype, but found A of type ",
              dtype_name(A.dtype()), " and B of type ", dtype_name(B.dtype()), " instead");
  common_device(op, {A, B});
  if (!left) {  // X A = B  <=>  A^T X^T = B^T, and A^T's triangle is the other one
    return transpose(solve_triangular(transpose(A, -2, -1), transpose(B, -2, -1), !upper, true, unitriangular), -2,
                     -1);
  }
  const int64_t n = A.size(A.dim() - 1);
  EMBER_CHECK(B.size(B.dim() - 2) == n, Error, op, ": Incompatible shapes of A and B for the equation AX = B (", n,
              "x", n, " and ", B.size(B.dim() - 2), "x", B.size(B.dim() - 1), ")");
  const Shape batch = broadcast_shapes(batch_shape(A), batch_shape(B), op);
  const int64_t k = B.size(B.dim() - 1);
  Tensor X;
  {
    autograd::NoGradGuard no_grad;
    const Tensor a = column_major(A, batch);
    X = column_major(expand(B, with_matrix(batch, n, k)), batch);
    if (X.numel() > 0 && a.numel() > 0) kernel::triangular_solve(a, X, upper, unitriangular);
  }
  if (autograd::any_requires_grad({A, B})) {
    autograd::record("LinalgSolveTriangularBackward0", {A, B}, {X}, {A, X},
                     functions::solve_triangular_backward(upper, unitriangular));
  }
  return X;
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& A) {
  check_matrix("linalg.slogdet", A, true);
  Tensor sign, logabsdet;
  {
    autograd::NoGradGuard no_grad;
    const LU f = lu_factor_of(A, batch_shape(A));
    const Tensor diag = diagonal_view(f.lu);
    sign = mul(prod(ember::sign(diag), -1), permutation_sign(f.pivots, A.dtype()));
    logabsdet = sum(log(abs(diag)), {-1});
  }
  if (autograd::any_requires_grad({A})) {
    autograd::record("LinalgSlogdetBackward0", {A}, {sign, logabsdet}, {A}, functions::slogdet_backward());
  }
  return {sign, logabsdet};
}

Tensor det(const Tensor& A) {
  check_matrix("linalg.det", A, true);
  Tensor d;
  {
    autograd::NoGradGuard no_grad;
    const LU f = lu_factor_of(A, batch_shape(A));
    d = mul(prod(diagonal_view(f.lu), -1), permutation_sign(f.pivots, A.dtype()));
  }
  if (autograd::any_requires_grad({A})) {
    autograd::record("LinalgDetBackward0", {A}, {d}, {A, d}, functions::det_backward());
  }
  return d;
}

std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  const char* op = "linalg.cholesky_ex";
  check_matrix(op, A, true);
  Tensor L, info;
  {
    autograd::NoGradGuard no_grad;
    Tensor a = column_major(A);
    info = int32_empty(batch_shape(A), A.device());
    if (a.numel() > 0) {
      kernel::cholesky(a, /*upper=*/false, info);
      if (check_errors) check_info(op, info, Failure::NotPositiveDefinite);
    } else {
      info.zero_();
    }
    L = tril(a);  // potrf leaves the other triangle as it was
  }
  if (autograd::any_requires_grad({A})) {
    autograd::record("LinalgCholeskyExBackward0", {A}, {L}, {L}, functions::cholesky_backward());
  }
  // U = L^T reads A's lower triangle too, as for symmetric input it must.
  return {upper ? transpose(L, -2, -1) : L, info};
}

Tensor cholesky(const Tensor& A, bool upper) {
  check_matrix("linalg.cholesky", A, true);
  auto [L, info] = cholesky_ex(A, upper, false);
  check_info("linalg.cholesky", info, Failure::NotPositiveDefinite);
  return L;
}

Tensor matrix_power(const Tensor& A, int64_t n) {
  EMBER_CHECK(A.defined(), ValueError, "linalg.matrix_power: got an undefined tensor");
  EMBER_CHECK(A.dim() >= 2 && A.size(A.dim() - 1) == A.size(A.dim() - 2), Error,
              "linalg.matrix_power: expected a tensor of square matrices, but got shape ", A.shape_str());
  if (n == 0) {
    const int64_t m = A.size(A.dim() - 1);
    return expand(eye(m, m, A.dtype(), A.device()), A.shape()).clone();
  }
  Tensor base = n < 0 ? inv(A) : A;
  uint64_t e = n < 0 ? static_cast<uint64_t>(-(n + 1)) + 1 : static_cast<uint64_t>(n);
  Tensor result;
  while (e > 0) {  // binary powering: log2(n) squarings
    if (e & 1) result = result.defined() ? matmul(result, base) : base;
    e >>= 1;
    if (e > 0) base = matmul(base, base);
  }
  return result.is_same(A) ? A.clone() : result;
}

}  // namespace ember::linalg

namespace ember {

Tensor inverse(const Tensor& A) { return linalg::inv(A); }
Tensor det(const Tensor& A) { return linalg::det(A); }
std::tuple<Tensor, Tensor> slogdet(const Tensor& A) { return linalg::slogdet(A); }
Tensor matrix_power(const Tensor& A, int64_t n) { return linalg::matrix_power(A, n); }

Tensor logdet(const Tensor& A) {
  auto [sign, logabsdet] = linalg::slogdet(A);
  // log of a negative determinant is nan (sign 0 already gives -inf).
  const Tensor nan = scalar_tensor(std::numeric_limits<double>::quiet_NaN());
  return where(lt(sign, scalar_tensor(0.0)), nan, logabsdet);
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  EMBER_CHECK(B.defined() && L.defined(), ValueError, "cholesky_solve: got an undefined tensor");
  EMBER_CHECK(B.dim() >= 2 && L.dim() >= 2, Error, "cholesky_solve: expected B and L to have at least 2 dimensions, "
              "got shapes ", B.shape_str(), " and ", L.shape_str());
  // Two triangular solves: through L then L^T (U^T then U).
  const Tensor lower = upper ? transpose(L, -2, -1) : L;
  const Tensor Y = linalg::solve_triangular(lower, B, /*upper=*/false);
  return linalg::solve_triangular(transpose(lower, -2, -1), Y, /*upper=*/true);
}

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  EMBER_CHECK(L.defined(), ValueError, "cholesky_inverse: got an undefined tensor");
  EMBER_CHECK(L.dim() >= 2 && L.size(L.dim() - 1) == L.size(L.dim() - 2), Error,
              "cholesky_inverse: expected a tensor of square matrices, got shape ", L.shape_str());
  const int64_t n = L.size(L.dim() - 1);
  if (n > 0) {
    // A zero on the diagonal makes L singular: report the first one's 1-based
    // position per matrix (0 when none), as LAPACK's potri would.
    autograd::NoGradGuard no_grad;
    using namespace linalg::detail;
    const Tensor zero = eq(diagonal_view(L), zeros({}, L.dtype(), L.device()));
    check_info("cholesky_inverse", first_flagged(zero), Failure::Singular);
  }
  return cholesky_solve(expand(eye(n, n, L.dtype(), L.device()), L.shape()), L, upper);
}

Tensor pinverse(const Tensor& A, double rcond, bool hermitian) {
  return linalg::pinv(A, std::nullopt, rcond, hermitian);
}

}  // namespace ember
