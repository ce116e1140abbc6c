// Backward formulas of the pool family. Max pooling scatters the gradient to
// the argmax positions (scatter_add, whose own backward is a gather); averages
// use the adjoint averaging op, whose backward is the average again.
#pragma once
#include <ember/autograd/node.h>
#include <ember/core/cpu/pool.h>

namespace ember::autograd::functions {

Vjp max_pool_backward(const Shape& input_shape);  // inputs x; saved: indices
Vjp avg_pool_backward(const cpu::PoolGeom& g);    // inputs x
Vjp avg_pool_adjoint_backward(const cpu::PoolGeom& g);  // inputs gy

}  // namespace ember::autograd::functions
