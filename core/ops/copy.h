// Copies and conversions: copy_, to(dtype/device), clone, contiguous, fill_.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// Writes src (broadcast to dst's shape, cast to dst's dtype) into dst.
// non_blocking: see Tensor::to.
Tensor& copy_(Tensor& dst, const Tensor& src, bool non_blocking = false);
// PyTorch refuses writes where several elements of `self` share one address
// (an expanded tensor): the result would depend on the order of the writes.
void check_no_internal_overlap(const Tensor& self, const char* op);
Tensor to_dtype(const Tensor& t, DType dtype, bool copy = false);
// The slow path of in-place ops under autograd: writes `result` (computed out
// of place, of self's shape) into self and makes self take over its history.
Tensor& assign_inplace(Tensor& self, const Tensor& result);

}  // namespace ember
