// Views with a geometry of their own (core/ops/shape.cpp): sliding windows
// (Tensor.unfold in PyTorch) and as_strided.
#pragma once
#include <optional>

#include <ember/core/tensor.h>

namespace ember {

// The windows of `size` elements every `step` along `dim`: that dim becomes
// the window count and a new last dim of `size` holds each window. A view;
// its gradient adds overlapping windows' gradients together.
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step);

// A view of x's storage with the given sizes, strides (elements, >= 0) and
// storage offset (x's by default), checked against the storage's extent. Its
// gradient adds each view element's gradient into the storage position it
// reads, then takes x's elements out of that storage-shaped sum.
Tensor as_strided(const Tensor& x, const Shape& size, const Strides& stride,
                  std::optional<int64_t> storage_offset = std::nullopt);

}  // namespace ember
