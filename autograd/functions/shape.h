// Backward formulas of the shape family.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// view, reshape, squeeze, unsqueeze, flatten: the gradient reshaped back.
Vjp reshape_backward(const Shape& in_shape);
Vjp expand_backward(const Shape& in_shape);
Vjp permute_backward(const Dims& dims);

}  // namespace ember::autograd::functions
