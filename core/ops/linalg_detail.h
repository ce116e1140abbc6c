// Shared pieces of the linalg front-ends (core/ops/linalg*.cpp): argument
// checks, the column-major copies the kernels work in, the device switch and
// the translation of LAPACK/cuSOLVER info codes into PyTorch's errors.
#pragma once
#include <ember/core/tensor.h>

namespace ember::linalg::detail {

// A defined float32/float64 tensor of matrices ([..., m, n], square when
// asked), on the CPU with LAPACK or on CUDA; else PyTorch's error naming op.
void check_matrix(const char* op, const Tensor& A, bool square);
// A's dims before the last two.
Shape batch_shape(const Tensor& A);
// A fresh copy of t ([..., rows, cols], batch dims as given by `batch`, t
// broadcast to them) laid out as the kernels want: each matrix column-major,
// matrices one after another (strides [..., 1, rows]). No autograd.
Tensor column_major(const Tensor& t, const Shape& batch);
inline Tensor column_major(const Tensor& t) { return column_major(t, batch_shape(t)); }
Tensor column_major_empty(const Shape& batch, int64_t rows, int64_t cols, DType dtype, Device device);
// The diagonals of [..., n, n] (a view without autograd).
Tensor diagonal_view(const Tensor& m);
// The 1-based position of the first true element along the last dim of
// `flags`, 0 where there is none, as int32: LAPACK's info for that failure.
Tensor first_flagged(const Tensor& flags);
Shape with_matrix(Shape batch, int64_t rows, int64_t cols);
Tensor int32_empty(const Shape& shape, Device device);

// P L U of A [batch..., m, n] (no autograd): the factors in one column-major
// matrix (L's unit diagonal implied), the 1-based pivots [batch..., min(m, n)]
// and the info codes [batch...], unchecked.
struct LU {
  Tensor lu, pivots, info;
};
LU lu_factor_of(const Tensor& A, const Shape& batch);

// What a nonzero info code means for the op that got it.
enum class Failure { Singular, SolveSingular, LuSingular, NotPositiveDefinite, NoConvergence, NoConvergenceSvd };
// Throws ember::Error for the first matrix whose info is nonzero (copies
// info to the host: the one synchronisation of these ops on CUDA).
void check_info(const char* op, const Tensor& info, Failure failure);

// The device switch: cpu:: or cuda:: kernels of core/cpu/linalg.h.
namespace kernel {
void lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info);
void lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool transpose);
void cholesky(const Tensor& a, bool upper, const Tensor& info);
void triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool unitriangular);
void geqrf(const Tensor& a, const Tensor& tau);
void orgqr(const Tensor& q, const Tensor& tau);
void eigh(const Tensor& a, const Tensor& w, bool upper, bool vectors, const Tensor& info);
void svd(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vh, bool full, bool vectors,
         const Tensor& info);
}  // namespace kernel

}  // namespace ember::linalg::detail
