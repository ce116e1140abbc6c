// Backward formulas of the softmax family; both save the input x and the output y.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

Vjp softmax_backward(int64_t dim);      // y * (g - sum(g * y))
Vjp log_softmax_backward(int64_t dim);  // g - exp(y) * sum(g)

}  // namespace ember::autograd::functions
