// Backward formulas of the shape family.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// view, reshape, squeeze, unsqueeze, flatten: the gradient reshaped back.
Vjp reshape_backward(const Shape& in_shape);
Vjp expand_backward(const Shape& in_shape);
Vjp permute_backward(const Dims& dims);
// select / slice / narrow: the gradient written into zeros of the input's shape.
Vjp select_backward(const Shape& in_shape, int64_t dim, int64_t index);
Vjp slice_backward(const Shape& in_shape, int64_t dim, int64_t start, int64_t step, int64_t length);
Vjp flip_backward(const Dims& dims);
Vjp tril_triu_backward(int64_t diagonal, bool lower);
// split / chunk and unbind: the pieces' gradients joined back in one pass (the
// engine gives zeros for pieces that got none).
Vjp split_backward(int64_t dim);
Vjp unbind_backward(int64_t dim);
// One narrow of the gradient per input; sizes[i] is input i's extent along
// dim, -1 for an input cat skipped.
Vjp cat_backward(int64_t dim, const std::vector<int64_t>& sizes);

}  // namespace ember::autograd::functions
