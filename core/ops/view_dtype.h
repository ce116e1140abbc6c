// Views that read a tensor's memory as another dtype: Tensor.view(dtype), and
// the complex <-> real views (core/ops/complex.cpp) built on retyped_view.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// A view of t's storage with another dtype and geometry, outside autograd. It
// gets no view_base: autograd replays views within one dtype only, so in-place
// writes through it that autograd would record are refused (see check_inplace).
Tensor retyped_view(const Tensor& t, DType dtype, Shape shape, Strides strides, int64_t offset);

// t's bytes read as `dtype` (PyTorch's Tensor.view(dtype)). With a different
// element size the last dim must be contiguous; it shrinks or grows by the
// size ratio. Not differentiable: the result never requires grad.
Tensor view_dtype(const Tensor& t, DType dtype);

}  // namespace ember
