// Diagonals: the diagonal view and the ops built on it (diag, diag_embed,
// trace), and the index pairs of a triangle (tril_indices, triu_indices).
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// The view of the elements x[..., i, ..., i + offset, ...] over dims dim1 and
// dim2, which are removed; the diagonal becomes the last dim (core/ops/shape.cpp).
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// Its gradient: zeros of the input's shape with grad written on the diagonal
// (core/ops/view_scatter.cpp); differentiable, for double backward.
Tensor diagonal_backward(const Tensor& grad, const Shape& in_shape, int64_t offset, int64_t dim1, int64_t dim2);
// A new tensor with x's last dim laid on the diagonal of dims dim1 and dim2
// (of the result), zeros elsewhere (core/ops/view_scatter.cpp).
Tensor diag_embed(const Tensor& x, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
// 1-D: the square matrix with x on its offset-th diagonal; 2-D: a copy of
// that diagonal.
Tensor diag(const Tensor& x, int64_t offset = 0);
// The sum of a matrix's main diagonal.
Tensor trace(const Tensor& x);
// The 2 x N (row, column) indices of the lower / upper triangle of a
// row x col matrix, row by row, as torch.tril_indices / triu_indices.
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, DType dtype = DType::Int64,
                    Device device = kCPU);
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, DType dtype = DType::Int64,
                    Device device = kCPU);

}  // namespace ember
