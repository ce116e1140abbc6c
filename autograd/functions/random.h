// Backward formulas of the random family. A draw does not depend smoothly on
// its parameters here (no reparameterization), so, as in torch, the gradient
// of normal(mean, std) and bernoulli(p) is zero.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

Vjp zero_backward();  // saved: none; zeros for every input that needs a gradient

}  // namespace ember::autograd::functions
