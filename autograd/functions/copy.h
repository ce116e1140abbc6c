// Backward formulas of the copy family.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// to(device/dtype): the gradient goes back to where the input was.
Vjp to_backward(Device from);
// copy_(dst, src): dst's old value gets no gradient; src gets g.
Vjp copy_backward();

}  // namespace ember::autograd::functions
