// Shape ops and views. Views alias the input's storage; reshape copies only
// when the strides cannot express the new shape.
#pragma once
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

Tensor view(const Tensor& x, const Shape& shape);
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor permute(const Tensor& x, const Dims& dims);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x, std::optional<int64_t> dim = std::nullopt);
Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
// Python's x[start:end:step] along dim (step > 0; bounds are clamped).
Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor flip(const Tensor& x, const Dims& dims);

// The inverses of slice and select (core/ops/view_scatter.cpp): a copy of
// base with src written into the slice / at the index, as PyTorch's.
Tensor slice_scatter(const Tensor& base, const Tensor& src, int64_t dim = 0,
                     std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
                     int64_t step = 1);
Tensor select_scatter(const Tensor& base, const Tensor& src, int64_t dim, int64_t index);
// The gradients of slice and select: zeros of the input's shape with `grad`
// written in; differentiable, for double backward.
Tensor slice_backward(const Tensor& grad, const Shape& in_shape, int64_t dim, int64_t start, int64_t end,
                      int64_t step);
Tensor select_backward(const Tensor& grad, const Shape& in_shape, int64_t dim, int64_t index);
Tensor repeat(const Tensor& x, const Shape& repeats);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

// Joining and splitting (core/ops/join.cpp).
// cat promotes dtypes across inputs and skips 1-D empty tensors, as PyTorch.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
// Empty dims: roll the flattened tensor and restore the shape.
Tensor roll(const Tensor& x, const Dims& shifts, const Dims& dims = {});

// Resolves one -1 in `shape` against numel; throws naming `op`.
Shape infer_shape(const Shape& shape, int64_t numel, const char* op);

}  // namespace ember
