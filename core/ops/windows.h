// Sliding windows as a view (Tensor.unfold in PyTorch; core/ops/shape.cpp).
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// The windows of `size` elements every `step` along `dim`: that dim becomes
// the window count and a new last dim of `size` holds each window. A view;
// its gradient adds overlapping windows' gradients together.
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step);

}  // namespace ember
