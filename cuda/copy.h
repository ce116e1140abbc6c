// Device-side copies and fills (cuda/copy.cu). No CUDA headers here.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

// dst = src cast to dst's dtype and broadcast to its shape; both on the same
// CUDA device, any layout, one kernel.
void copy_on_device(Tensor& dst, const Tensor& src);
// Every element of t (on a CUDA device) = value in t's dtype.
void fill(Tensor& t, const Scalar& value);

}  // namespace ember::cuda
