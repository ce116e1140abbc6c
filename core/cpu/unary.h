// CPU kernels for unary elementwise ops. The front-end (core/ops/unary.cpp)
// has already chosen the dtypes: `in` arrives in `out`'s dtype (never a half
// type) unless a kernel says otherwise, and `out` may alias `in` (in-place ops).
#pragma once
#include <optional>

#include <ember/core/tensor.h>

namespace ember {

enum class UnaryOp {
  // any math dtype (bool only where noted in the front-end)
  Neg, Abs, Sign, Square, Relu, Floor, Ceil, Round,
  // floating dtypes only
  Exp, Log, Log1p, Expm1, Sqrt, Rsqrt, Sin, Cos, Tanh, Sigmoid, Reciprocal, Erf,
  GeluErf, GeluTanh, Silu,
};

namespace cpu {

// out = op(in).
void unary(UnaryOp op, Tensor& out, const Tensor& in);
// out = in * beta > threshold ? in : log1p(exp(in * beta)) / beta (floating).
void softplus(Tensor& out, const Tensor& in, double beta, double threshold);
// out = min(max(in, lo), hi) with absent bounds skipped; NaN stays NaN.
void clamp(Tensor& out, const Tensor& in, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi);
// Tensor bounds, broadcast to out's shape; an undefined bound is skipped. All share out's dtype.
void clamp_tensor(Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi);
// out = in ^ exponent. Integer dtypes need a non-negative integral exponent.
void pow_scalar(Tensor& out, const Tensor& in, const Scalar& exponent);
// out = base ^ exponent, both broadcast to out and of out's dtype.
void pow(Tensor& out, const Tensor& base, const Tensor& exponent);
// NaN, +inf and -inf replaced by the given values (floating dtypes).
void nan_to_num(Tensor& out, const Tensor& in, double nan, double posinf, double neginf);

// ---- 0/1 masks for backward formulas; out has in's floating dtype.
// 1 where (no lo or in >= lo) and (no hi or in <= hi); NaN gives 0.
void in_range_mask(Tensor& out, const Tensor& in, std::optional<double> lo, std::optional<double> hi);
// 1 where in is finite.
void isfinite_mask(Tensor& out, const Tensor& in);
// out = keep != 0 ? value : 0, broadcast; value and keep of out's dtype.
void keep_where(Tensor& out, const Tensor& value, const Tensor& keep);

}  // namespace cpu
}  // namespace ember
