// Copies and conversions: copy_, to(dtype/device), clone, contiguous, fill_.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// Writes src (broadcast to dst's shape, cast to dst's dtype) into dst.
// non_blocking: see Tensor::to.
Tensor& copy_(Tensor& dst, const Tensor& src, bool non_blocking = false);
Tensor to_dtype(const Tensor& t, DType dtype, bool copy = false);
// The slow path of in-place ops under autograd: writes `result` (computed out
// of place, of self's shape) into self and makes self take over its history.
Tensor& assign_inplace(Tensor& self, const Tensor& result);

}  // namespace ember
