// Backward formulas of the reduce family. keep_shape is the output shape with
// reduced dims kept as size 1; reduced lists the reduced dims of the input.
#pragma once
#include <optional>

#include <ember/autograd/node.h>

namespace ember::autograd::functions {

Vjp sum_backward(const Shape& keep_shape, const Shape& in_shape);
Vjp mean_backward(const Shape& keep_shape, const Shape& in_shape, int64_t reduced_count);
// saved: x, out. Zeros in x take the product of the other elements.
Vjp prod_backward(const Shape& keep_shape, const Shape& in_shape, std::optional<int64_t> dim);
// max()/min()/amax/amin; saved: x, out. Ties share the gradient evenly.
Vjp extreme_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& reduced);
// max(dim)/min(dim); saved: indices. The gradient goes to the index.
Vjp index_reduce_backward(const Shape& keep_shape, const Shape& in_shape, int64_t dim);
// saved: x. denom = count - correction (clamped at 0).
Vjp var_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& reduced, double denom);
// saved: x, out.
Vjp std_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& reduced, double correction,
                 double denom);
// saved: x, out.
Vjp norm_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& reduced, double p);
// saved: x, out.
Vjp logsumexp_backward(const Shape& keep_shape, const Shape& in_shape, const Dims& kept, const Dims& reduced);
// dim < 0: a 0-d input. saved: none.
Vjp cumsum_backward(int64_t dim);

// Gradient of a reduction broadcast back over the reduced dims.
Tensor expand_reduced(const Tensor& g, const Shape& keep_shape, const Shape& in_shape);

}  // namespace ember::autograd::functions
