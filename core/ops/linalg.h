// The linalg family (torch.linalg): factorizations, solvers and the functions
// built on them, for float32 and float64 matrices batched over leading dims,
// on the CPU (LAPACK) and on CUDA (cuSOLVER). Every function is
// differentiable; errors name the op as PyTorch's do ("linalg.inv: ...").
// The norms (vector_norm, matrix_norm, norm) are compositions of reductions,
// in python/ember/linalg.py.
#pragma once
#include <optional>
#include <string>
#include <tuple>

#include <ember/core/tensor.h>

namespace ember::linalg {

// A^-1 of square [..., n, n] matrices; singular -> ember::Error.
Tensor inv(const Tensor& A);
// (A^-1, info): info [...] is LAPACK's code per matrix (> 0: singular, and
// the inverse holds inf/nan); raises as inv does only when check_errors.
std::tuple<Tensor, Tensor> inv_ex(const Tensor& A, bool check_errors = false);
// X with A X = B (left) or X A = B (right). B is [..., n, k], or a vector
// [n] / [..., n] (A's shape without the last dim); batch dims broadcast.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
// X with A X = B (left) or X A = B for triangular A, read from its upper or
// lower triangle (unitriangular: its diagonal taken as ones). B is a batch of
// matrices; batch dims broadcast. A zero on the diagonal gives inf/nan.
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true, bool unitriangular = false);
Tensor det(const Tensor& A);
// (sign, log|det|); a singular matrix gives (0, -inf).
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);
// Lower L with A = L L^T (upper: U with A = U^T U); reads only that triangle.
Tensor cholesky(const Tensor& A, bool upper = false);
// (L, info): info > 0 is the order of the leading minor that is not
// positive-definite (L is then partial); raises only when check_errors.
std::tuple<Tensor, Tensor> cholesky_ex(const Tensor& A, bool upper = false, bool check_errors = false);
// P A = L U with partial pivoting, as LAPACK's getrf: (LU, pivots), L's unit
// diagonal implied, pivots int32 and 1-based. A singular U raises unless
// through lu_factor_ex, which returns (LU, pivots, info). pivot=false is not
// implemented. A may be rectangular.
std::tuple<Tensor, Tensor> lu_factor(const Tensor& A, bool pivot = true);
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& A, bool pivot = true, bool check_errors = false);
// X with A X = B (left) or X A = B, A given by lu_factor (adjoint: A^T instead).
Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true, bool adjoint = false);
// A = P L U: P [m, m], L [m, k] (unit lower), U [k, n].
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A, bool pivot = true);
// mode "reduced" (Q [m, k], R [k, n]), "complete" (Q [m, m], R [m, n]) or
// "r" (Q empty, R [k, n]); k = min(m, n).
std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode = "reduced");
// Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices,
// read from the lower ("L") or upper ("U") triangle.
std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& UPLO = "L");
Tensor eigvalsh(const Tensor& A, const std::string& UPLO = "L");
// A = U diag(S) Vh, S descending; full_matrices: U [m, m], Vh [n, n], else
// U [m, k], Vh [k, n].
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true);
Tensor svdvals(const Tensor& A);
// Moore-Penrose pseudo-inverse through the SVD (eigh when hermitian):
// singular values at most max(atol, rtol * largest) count as zero. Without
// either, rtol = eps(dtype) * max(m, n); with only atol > 0, rtol = 0.
Tensor pinv(const Tensor& A, std::optional<double> atol = std::nullopt, std::optional<double> rtol = std::nullopt,
            bool hermitian = false);
// A^n by repeated squaring (n < 0: inv(A)^-n; n = 0: the identity).
Tensor matrix_power(const Tensor& A, int64_t n);

}  // namespace ember::linalg

namespace ember {

// The top-level names PyTorch keeps for these.
Tensor inverse(const Tensor& A);                             // linalg::inv
Tensor det(const Tensor& A);                                 // linalg::det
Tensor logdet(const Tensor& A);                              // log(det): nan for det < 0
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);         // linalg::slogdet
Tensor pinverse(const Tensor& A, double rcond = 1e-15, bool hermitian = false);
Tensor matrix_power(const Tensor& A, int64_t n);             // linalg::matrix_power
// X = A^-1 B for A = L L^T (upper: A = U^T U) given its Cholesky factor.
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);
Tensor cholesky_inverse(const Tensor& L, bool upper = false);  // cholesky_solve(I, L)

}  // namespace ember
