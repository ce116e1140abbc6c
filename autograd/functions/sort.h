// Backward formulas of the sort family.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// sort / topk values; saved: the indices (positions along `dim` of the input
// of shape `in_shape`). The gradient of each value goes back to its position.
Vjp sort_backward(const Shape& in_shape, int64_t dim);

}  // namespace ember::autograd::functions
