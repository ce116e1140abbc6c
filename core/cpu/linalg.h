// CPU kernels of the linalg family: batched LAPACK factorizations.
//
// The contract shared with cuda/linalg.h: matrices are float32 or float64,
// batched and column-major, as LAPACK wants them: a [batch..., rows, cols]
// tensor whose last two strides are (1, rows) and whose matrices lie one
// after another (core/ops/linalg.cpp makes such copies). Vectors (pivots,
// tau, eigenvalues, singular values) and `info` are contiguous; pivots and
// info are int32. Every routine works in place and never throws for a
// numerical failure: it writes LAPACK's code for matrix i into info[i]
// (0: success), and the front-end turns that into the op's error.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// Whether the linked BLAS carries LAPACK (cmake/blas.cmake).
bool has_lapack();

// a [batch..., m, n] = P L U (getrf); pivots [batch..., min(m, n)]: pivots[i]
// is the 1-based row swapped with row i. info > 0: U[info-1, info-1] is
// exactly zero.
void lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info);
// b = A^-1 b (A^-T b when `transpose`) from lu_factor's output of a square A
// (getrs); b is [batch..., n, k].
void lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool transpose = false);
// The lower (or upper) Cholesky factor over a's lower (upper) triangle
// (potrf); the other triangle is left as it was. info > 0: the leading minor
// of that order is not positive-definite.
void cholesky(const Tensor& a, bool upper, const Tensor& info);
// b = A^-1 b for triangular A, read from its upper or lower triangle (the
// other is ignored), its diagonal taken as ones when `unitriangular`
// (trtrs). A zero on the diagonal gives infinities, as in PyTorch: no info.
void triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool unitriangular);
// Householder QR of a [batch..., m, n] (geqrf): R in the upper triangle,
// the reflectors below it, their scales in tau [batch..., min(m, n)].
void geqrf(const Tensor& a, const Tensor& tau);
// q [batch..., m, c] holds geqrf's reflectors in its first k = tau.size(-1)
// columns; overwritten with the first c columns of Q (orgqr, k <= c <= m).
void orgqr(const Tensor& q, const Tensor& tau);
// Eigenvalues (ascending) of the symmetric a's lower (upper) triangle into
// w [batch..., n]; with `vectors`, a becomes the eigenvectors (syevd).
void eigh(const Tensor& a, const Tensor& w, bool upper, bool vectors, const Tensor& info);
// a [batch..., m, n] with m >= n (destroyed) = U diag(s) Vh: s [batch..., n];
// with `vectors`, u is [batch..., m, m] (full) or [batch..., m, n] and vh is
// [batch..., n, n]; without, u and vh are ignored.
void svd(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vh, bool full, bool vectors,
         const Tensor& info);

}  // namespace ember::cpu
