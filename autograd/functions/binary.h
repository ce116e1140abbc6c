// Backward formulas of the binary family. The engine sums a gradient back to
// its input's shape and casts it to its dtype, so formulas return g-shaped
// results in the compute dtype.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

Vjp add_backward(const Scalar& alpha);  // saved: none
Vjp sub_backward(const Scalar& alpha);  // saved: none
Vjp mul_backward();                     // saved: a, b
Vjp div_backward();                     // saved: a, b

}  // namespace ember::autograd::functions
