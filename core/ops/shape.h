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
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);

// Resolves one -1 in `shape` against numel; throws naming `op`.
Shape infer_shape(const Shape& shape, int64_t numel, const char* op);

}  // namespace ember
