// Unary elementwise ops (plus pow and clamp, which take scalar or tensor
// operands). Integer inputs follow PyTorch: exp, log, sqrt, sigmoid... return
// the default float dtype; abs, neg, sign, square, floor, ceil, round, relu
// and clamp keep the integer dtype.
#pragma once
#include <optional>
#include <string>

#include <ember/core/tensor.h>

namespace ember {

Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor square(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor round(const Tensor& x, int64_t decimals);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor relu(const Tensor& x);
// approximate: "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
// At least one bound must be given. Scalar bounds promote like Python numbers.
Tensor clamp(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max);
// Tensor bounds broadcast with x; an undefined bound is skipped.
Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max);
Tensor pow(const Tensor& base, const Scalar& exponent);
Tensor pow(const Tensor& base, const Tensor& exponent);
Tensor pow(const Scalar& base, const Tensor& exponent);
// Defaults: NaN -> 0, +inf -> the dtype's largest value, -inf -> its lowest.
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt);

// ---- pieces of backward formulas (not in the Python API). Masks are 0/1 in
// x's floating dtype and carry no gradient.
// 1 where (no lo or x >= lo) and (no hi or x <= hi); NaN gives 0.
Tensor in_range_mask(const Tensor& x, std::optional<double> lo, std::optional<double> hi);
// 1 where x is finite.
Tensor isfinite_mask(const Tensor& x);
// value where keep != 0, else 0 (also where value is NaN or inf), broadcast.
// Differentiable in value.
Tensor keep_where(const Tensor& value, const Tensor& keep);

}  // namespace ember
