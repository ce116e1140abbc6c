// Checks of floating-point values (core/ops/float_checks.cpp): bool tensors
// of x's shape (isclose: the inputs' broadcast shape), as PyTorch's.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isposinf(const Tensor& x);
Tensor isneginf(const Tensor& x);
Tensor isfinite(const Tensor& x);
// |a - b| <= atol + rtol * |b|, or a == b (equal infinities); NaNs equal when
// equal_nan. a and b must have the same dtype.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);

}  // namespace ember
