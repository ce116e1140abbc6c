// Backward formulas of the copy family.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// to(device/dtype): the gradient goes back to where the input was.
Vjp to_backward(Device from);
// copy_(dst, src): dst's old value gets no gradient; src gets g.
Vjp copy_backward();

// An in-place write through a view of `base`: `positions` holds the flat
// indices (into base) of the view's elements, `keep` is 1 where base kept its
// old value and 0 where the view wrote. Inputs: base's old value, the result.
Vjp copy_slices_backward(const Tensor& keep, const Tensor& positions, const Shape& view_shape);
// The view read back out of its rewritten base. Input: the base.
Vjp view_of_base_backward(const Tensor& positions, const Shape& base_shape);

}  // namespace ember::autograd::functions
