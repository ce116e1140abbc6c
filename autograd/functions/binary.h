// Backward formulas of the binary family. The engine sums a gradient back to
// its input's shape and casts it to its dtype, so formulas return g-shaped
// results in the compute dtype. Comparisons, logical and bitwise ops are not
// differentiable and record no node.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

Vjp add_backward(const Scalar& alpha);  // saved: none
Vjp sub_backward(const Scalar& alpha);  // saved: none
Vjp mul_backward();                     // saved: a, b
Vjp div_backward();                     // saved: a, b
Vjp rounding_div_backward();            // saved: none (zero gradients, as PyTorch)
Vjp remainder_backward();               // saved: a, b
Vjp maximum_backward();                 // saved: a, b
Vjp minimum_backward();                 // saved: a, b
Vjp where_backward();                   // inputs: a, b; saved: cond
Vjp lerp_backward();                    // inputs: start, end, weight; saved: the same
Vjp masked_fill_backward();             // inputs: a, value; saved: mask

}  // namespace ember::autograd::functions
