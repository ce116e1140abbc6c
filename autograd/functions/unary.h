// Backward formulas of the unary family, written with ember ops so double
// backward works. The comment after each says what record() saves, in order.
#pragma once
#include <optional>

#include <ember/autograd/functions/common.h>
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

Vjp neg_backward();         // saved: none
Vjp abs_backward();         // saved: x
Vjp square_backward();      // saved: x
Vjp exp_backward();         // saved: out
Vjp log_backward();         // saved: x
Vjp log1p_backward();       // saved: x
Vjp expm1_backward();       // saved: out
Vjp sqrt_backward();        // saved: out
Vjp rsqrt_backward();       // saved: out
Vjp sin_backward();         // saved: x
Vjp cos_backward();         // saved: x
Vjp tanh_backward();        // saved: out
Vjp sigmoid_backward();     // saved: out
Vjp reciprocal_backward();  // saved: out
Vjp erf_backward();         // saved: x
Vjp relu_backward();        // saved: out
Vjp gelu_backward(bool tanh_approximation);        // saved: x
Vjp silu_backward();                               // saved: x
Vjp softplus_backward(double beta, double threshold);  // saved: x
Vjp clamp_backward(std::optional<double> lo, std::optional<double> hi);  // saved: x
Vjp clamp_tensor_backward();                       // saved: x, min, max (either may be undefined)
Vjp pow_scalar_backward(const Scalar& exponent);   // saved: base
Vjp pow_backward();                                // saved: base, exponent, out
Vjp nan_to_num_backward();                         // saved: x
Vjp keep_where_backward();                         // saved: keep

}  // namespace ember::autograd::functions
