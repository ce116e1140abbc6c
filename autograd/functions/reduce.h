// Backward formulas of the reduce family.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// keep_shape: the output shape with reduced dims kept as size 1.
Vjp sum_backward(const Shape& keep_shape, const Shape& in_shape);
Vjp mean_backward(const Shape& keep_shape, const Shape& in_shape, int64_t reduced_count);

// Gradient of a reduction broadcast back over the reduced dims.
Tensor expand_reduced(const Tensor& g, const Shape& keep_shape, const Shape& in_shape);

}  // namespace ember::autograd::functions
