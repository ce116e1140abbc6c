// Backward formulas of the matmul family, written with matmul itself so that
// double backward works. Broadcast batch dims are summed back by the engine.
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

Vjp matmul_backward();                                        // saved: a, b (any of matmul's shape cases)
Vjp addmm_backward(const Scalar& beta, const Scalar& alpha);  // saved: m1, m2

}  // namespace ember::autograd::functions
