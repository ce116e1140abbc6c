// Backward formulas shared by several families.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// Zeros for every input that needs a gradient: piecewise-constant ops
// (sign, floor, round) and sampling ops (normal, bernoulli), as in PyTorch.
Vjp zero_backward();

}  // namespace ember::autograd::functions
