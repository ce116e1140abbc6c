// CPU kernels of the elementwise math functions beyond the core unary and
// binary families: inverse and hyperbolic trigonometry, base-2/10 logs and
// exponentials, trunc/frac, erfc, lgamma/digamma; atan2, hypot, fmod,
// copysign, logaddexp(2), xlogy, and the fused gradients of gelu and silu.
// Floating dtypes (float32/float64; the
// front-end computes the half types in float32); `out` may alias an input.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

enum class MathOp {
  Log2, Log10, Exp2, Sinh, Cosh, Tan, Asin, Acos, Atan, Asinh, Acosh, Atanh, Trunc, Frac, Erfc, Lgamma, Digamma,
  Trigamma, Erfinv,
};
// The last five are fused gradients (a = the incoming gradient): a * gelu'(b)
// (erf and tanh forms) and a * silu'(b) with b = x; a * (1 - b^2) and
// a * b (1 - b) with b = tanh's and sigmoid's output. One pass each instead of
// a chain of elementwise ops.
enum class MathOp2 {
  Atan2, Hypot, Fmod, Copysign, LogAddExp, LogAddExp2, Xlogy,
  GeluBackward, GeluTanhBackward, SiluBackward, TanhBackward, SigmoidBackward,
};

namespace cpu {

void unary_math(MathOp op, Tensor& out, const Tensor& in);
// Inputs broadcast to out's shape, of out's dtype.
void binary_math(MathOp2 op, Tensor& out, const Tensor& a, const Tensor& b);

}  // namespace cpu
}  // namespace ember
