// Backward formulas of the extra math functions (core/ops/unary_math.cpp),
// written with ember ops so they run on any device and differentiate again
// (except trigamma's, the end of the chain lgamma -> digamma -> trigamma).
#pragma once
#include <ember/autograd/node.h>
#include <ember/core/cpu/unary_math.h>

namespace ember::autograd::functions {

// Formulas of one input given its saved input (or output, see saves_output).
Vjp unary_math_backward(MathOp op);
bool unary_math_saves_output(MathOp op);
// Formulas of two inputs (a, b), with a, b and the output saved.
Vjp binary_math_backward(MathOp2 op);

}  // namespace ember::autograd::functions
