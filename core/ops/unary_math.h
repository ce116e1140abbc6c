// The elementwise math functions beyond the core unary and binary families
// (kernels in core/cpu/unary_math.cpp and cuda/unary_math.cu). Integer and
// bool inputs compute in the default float dtype, as PyTorch's, except trunc
// (an integer is already whole) and fmod of two integers (C's remainder, the
// sign of the dividend; dividing by zero raises).
#pragma once
#include <string>

#include <ember/core/tensor.h>

namespace ember {

Tensor log2(const Tensor& x);
Tensor log10(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor trunc(const Tensor& x);
Tensor frac(const Tensor& x);  // x - trunc(x); floating dtypes only
Tensor erfc(const Tensor& x);
Tensor erfinv(const Tensor& x);  // NaN outside [-1, 1]
Tensor lgamma(const Tensor& x);
Tensor digamma(const Tensor& x);
// polygamma(1, x), the derivative of digamma; not differentiable itself.
Tensor trigamma(const Tensor& x);

// Two operands, broadcast, promoted like the arithmetic ops.
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, const Tensor& b);
Tensor logaddexp(const Tensor& a, const Tensor& b);
Tensor logaddexp2(const Tensor& a, const Tensor& b);
// x * log(y), 0 where x is 0 (unless y is NaN).
Tensor xlogy(const Tensor& x, const Tensor& y);
// The gradients of gelu (approximate "none" or "tanh") and silu with respect
// to x, given the incoming gradient: one fused elementwise kernel. Computed
// without autograd recording; the gelu and silu nodes use them when the
// gradient itself needs no graph (no create_graph), ember ops otherwise.
Tensor gelu_backward(const Tensor& grad, const Tensor& x, const std::string& approximate = "none");
Tensor silu_backward(const Tensor& grad, const Tensor& x);
// The same for tanh and sigmoid, from their output y: grad * (1 - y^2), grad * y (1 - y).
Tensor tanh_backward(const Tensor& grad, const Tensor& y);
Tensor sigmoid_backward(const Tensor& grad, const Tensor& y);

}  // namespace ember
