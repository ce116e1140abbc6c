// Copies and conversions: copy_, to(dtype/device), clone, contiguous, fill_.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// Writes src (broadcast to dst's shape, cast to dst's dtype) into dst.
Tensor& copy_(Tensor& dst, const Tensor& src);
Tensor to_dtype(const Tensor& t, DType dtype, bool copy = false);

}  // namespace ember
