// Backward formulas of the index family: gathers scatter-add back, scatters
// gather back.
#pragma once
#include <ember/autograd/node.h>
#include <ember/core/ops/index.h>

namespace ember::autograd::functions {

Vjp index_select_backward(const Shape& in_shape, int64_t dim, const Tensor& index);
Vjp gather_backward(const Shape& in_shape, int64_t dim, const Tensor& index);
// Inputs (self, src) or (self) for the scalar-value form.
Vjp scatter_backward(int64_t dim, const Tensor& index, const Shape& src_shape = {});
Vjp scatter_add_backward(int64_t dim, const Tensor& index, const Shape& src_shape);
Vjp index_add_backward(int64_t dim, const Tensor& index, const Scalar& alpha);
Vjp index_backward(const Shape& in_shape, const IndexList& indices);
// Inputs (self, values).
Vjp index_put_backward(const IndexList& indices, bool accumulate);

}  // namespace ember::autograd::functions
