// The linalg family's decompositions: QR, the symmetric eigendecomposition,
// the SVD, and pinv built on them. Shared helpers are in linalg_detail.h.
// The SVD kernels take rows >= columns only (cuSOLVER's gesvd does); a wide
// matrix is decomposed through its transpose here, on every device, so the
// CPU tests cover the path CUDA takes.
#include <ember/core/ops/linalg.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <ember/autograd/functions/linalg.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/linalg_detail.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/unary.h>

namespace ember::linalg {

namespace functions = autograd::functions;
using namespace detail;

namespace {

Shape with_dims(Shape batch, std::initializer_list<int64_t> dims) {
  batch.insert(batch.end(), dims.begin(), dims.end());
  return batch;
}

// Identity matrices [batch..., n, n] (contiguous, not a view).
Tensor identities(const Shape& batch, int64_t n, DType dtype, Device device) {
  return expand(eye(n, n, dtype, device), with_dims(batch, {n, n})).clone();
}

Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }

}  // namespace

std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode) {
  const char* op = "linalg.qr";
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r", ValueError, op,
              ": qr received unrecognized mode '", mode, "' but expected one of 'reduced' (default), 'r', or 'complete'");
  check_matrix(op, A, false);
  const int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1), k = std::min(m, n);
  const Shape batch = batch_shape(A);
  Tensor Q, R;
  {
    autograd::NoGradGuard no_grad;
    Tensor a = column_major(A);
    Tensor tau = empty(with_dims(batch, {k}), A.dtype(), A.device());
    if (a.numel() > 0) kernel::geqrf(a, tau);
    R = triu(mode == "complete" ? a : narrow(a, -2, 0, k));
    if (mode == "r") {
      Q = empty({0}, A.dtype(), A.device());
    } else {
      const int64_t cols = mode == "complete" ? m : k;
      if (k == 0) {  // nothing to reflect: Q is (the first columns of) the identity
        Q = narrow(identities(batch, m, A.dtype(), A.device()), -1, 0, cols).clone();
      } else {
        Q = column_major_empty(batch, m, cols, A.dtype(), A.device());
        Q.zero_();
        Tensor reflectors = narrow(Q, -1, 0, k);
        copy_(reflectors, narrow(a, -1, 0, k));
        if (Q.numel() > 0) kernel::orgqr(Q, tau);
      }
    }
  }
  if (autograd::any_requires_grad({A})) {
    autograd::record("LinalgQrBackward0", {A}, {Q, R}, {Q, R}, functions::qr_backward(mode));
  }
  return {Q, R};
}

namespace {

// Eigenvalues and (with `vectors`) eigenvectors, no autograd.
std::tuple<Tensor, Tensor> eigh_raw(const char* op, const Tensor& A, const std::string& UPLO, bool vectors) {
  EMBER_CHECK(UPLO == "L" || UPLO == "U" || UPLO == "l" || UPLO == "u", Error, op,
              ": Expected UPLO argument to be 'L' or 'U', but got ", UPLO);
  check_matrix(op, A, true);
  const int64_t n = A.size(A.dim() - 1);
  autograd::NoGradGuard no_grad;
  Tensor a = column_major(A);
  Tensor w = empty(with_dims(batch_shape(A), {n}), A.dtype(), A.device());
  const Tensor info = empty(batch_shape(A), DType::Int32, A.device());
  if (a.numel() > 0) {
    kernel::eigh(a, w, UPLO == "U" || UPLO == "u", vectors, info);
    check_info(op, info, Failure::NoConvergence);
  }
  return {w, vectors ? a : Tensor()};
}

}  // namespace

std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& UPLO) {
  auto [w, V] = eigh_raw("linalg.eigh", A, UPLO, true);
  if (autograd::any_requires_grad({A})) {
    autograd::record("LinalgEighBackward0", {A}, {w, V}, {w, V}, functions::eigh_backward());
  }
  return {w, V};
}

Tensor eigvalsh(const Tensor& A, const std::string& UPLO) {
  // The gradient needs the eigenvectors: compute them only then.
  if (autograd::any_requires_grad({A})) return std::get<0>(eigh(A, UPLO));
  return std::get<0>(eigh_raw("linalg.eigvalsh", A, UPLO, false));
}

namespace {

// U, S, Vh without autograd; U and Vh undefined unless `vectors`.
std::tuple<Tensor, Tensor, Tensor> svd_raw(const char* op, const Tensor& A, bool full, bool vectors) {
  check_matrix(op, A, false);
  const int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1);
  if (m < n) {  // A^T = U' S Vh'  =>  A = Vh'^T S U'^T
    auto [u, s, vh] = svd_raw(op, mT(A), full, vectors);
    return {vectors ? mT(vh) : Tensor(), s, vectors ? mT(u) : Tensor()};
  }
  const Shape batch = batch_shape(A);
  autograd::NoGradGuard no_grad;
  Tensor s = empty(with_dims(batch, {n}), A.dtype(), A.device());
  Tensor u, vh;
  if (n == 0 || numel_of(batch) == 0) {  // nothing to decompose
    if (vectors) {
      u = narrow(identities(batch, m, A.dtype(), A.device()), -1, 0, full ? m : n).clone();
      vh = identities(batch, n, A.dtype(), A.device());
    }
    return {u, s, vh};
  }
  Tensor a = column_major(A);
  if (vectors) {
    u = column_major_empty(batch, m, full ? m : n, A.dtype(), A.device());
    vh = column_major_empty(batch, n, n, A.dtype(), A.device());
  }
  const Tensor info = empty(batch, DType::Int32, A.device());
  kernel::svd(a, u, s, vh, full, vectors, info);
  check_info(op, info, Failure::NoConvergenceSvd);
  return {u, s, vh};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices) {
  auto [U, S, Vh] = svd_raw("linalg.svd", A, full_matrices, true);
  if (autograd::any_requires_grad({A})) {
    autograd::record("LinalgSvdBackward0", {A}, {U, S, Vh}, {U, S, Vh}, functions::svd_backward(full_matrices));
  }
  return {U, S, Vh};
}

Tensor svdvals(const Tensor& A) {
  // The gradient needs U and Vh: compute them only then.
  if (autograd::any_requires_grad({A})) return std::get<1>(svd(A, false));
  return std::get<1>(svd_raw("linalg.svdvals", A, false, false));
}

Tensor pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  const char* op = "linalg.pinv";
  check_matrix(op, A, hermitian);
  const int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1);
  const double eps = A.dtype() == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                                 : std::numeric_limits<double>::epsilon();
  const double a_tol = atol.value_or(0.0);
  const double r_tol = rtol ? *rtol : (atol && *atol > 0 ? 0.0 : eps * static_cast<double>(std::max(m, n)));
  // 1/s where s counts as nonzero, 0 elsewhere; the inner where keeps 1/0
  // (and its infinite derivative) out of the graph.
  auto invert = [&](const Tensor& magnitude, const Tensor& values) {
    Tensor largest = magnitude.numel() > 0 ? amax(magnitude, {-1}, true) : magnitude;
    const Tensor tol = maximum(mul(largest, scalar_tensor(r_tol)), scalar_tensor(a_tol));
    const Tensor keep = gt(magnitude, tol);
    return where(keep, reciprocal(where(keep, values, scalar_tensor(1.0))), scalar_tensor(0.0));
  };
  if (hermitian) {  // A = V diag(w) V^T  =>  A+ = V diag(1/w) V^T
    auto [w, V] = eigh(A, "L");
    return matmul(mul(V, unsqueeze(invert(abs(w), w), -2)), mT(V));
  }
  auto [U, S, Vh] = svd(A, false);
  return matmul(mul(mT(Vh), unsqueeze(invert(S, S), -2)), mT(U));  // V diag(1/s) U^T
}

}  // namespace ember::linalg
