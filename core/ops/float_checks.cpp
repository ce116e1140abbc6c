// isnan, isinf, isposinf, isneginf, isfinite, isclose and allclose, as
// PyTorch's, written with the elementwise ops so that they run on every
// device. Integer and bool tensors are never NaN or infinite; a complex
// number is NaN or infinite when either part is.
#include <ember/core/ops/float_checks.h>

#include <limits>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/unary.h>
#include <ember/core/type_promotion.h>

namespace ember {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor number(double v) { return scalar_tensor(v); }

Tensor all_false(const Tensor& x) { return zeros(x.shape(), DType::Bool, x.device()); }

void check_defined(const Tensor& x, const char* op) {
  EMBER_CHECK(x.defined(), Error, op, ": expected a defined tensor");
}

}  // namespace

Tensor isnan(const Tensor& x) {
  check_defined(x, "isnan");
  autograd::NoGradGuard no_grad;
  return is_differentiable(x.dtype()) ? ne(x, x) : all_false(x);
}

Tensor isinf(const Tensor& x) {
  check_defined(x, "isinf");
  autograd::NoGradGuard no_grad;
  return is_differentiable(x.dtype()) ? eq(abs(x), number(kInf)) : all_false(x);
}

Tensor isposinf(const Tensor& x) {
  check_defined(x, "isposinf");
  EMBER_CHECK(!is_complex(x.dtype()), Error, "isposinf: does not support complex inputs");
  autograd::NoGradGuard no_grad;
  return is_floating(x.dtype()) ? eq(x, number(kInf)) : all_false(x);
}

Tensor isneginf(const Tensor& x) {
  check_defined(x, "isneginf");
  EMBER_CHECK(!is_complex(x.dtype()), Error, "isneginf: does not support complex inputs");
  autograd::NoGradGuard no_grad;
  return is_floating(x.dtype()) ? eq(x, number(-kInf)) : all_false(x);
}

Tensor isfinite(const Tensor& x) {
  check_defined(x, "isfinite");
  autograd::NoGradGuard no_grad;
  // x - x is 0 for every finite x and NaN for NaN and +-inf: one kernel less
  // than !isnan && !isinf.
  return is_differentiable(x.dtype()) ? eq(sub(x, x), number(0.0)) : ones(x.shape(), DType::Bool, x.device());
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  const char* op = "isclose";
  check_defined(a, op);
  check_defined(b, op);
  EMBER_CHECK(a.dtype() == b.dtype(), Error, op, ": expected both inputs to have the same dtype, but got ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  EMBER_CHECK(rtol >= 0, Error, op, ": rtol must be greater than or equal to zero, but got ", rtol);
  EMBER_CHECK(atol >= 0, Error, op, ": atol must be greater than or equal to zero, but got ", atol);
  common_device(op, {a, b});
  autograd::NoGradGuard no_grad;
  Tensor close = eq(a, b);  // also equal infinities
  if (equal_nan && is_differentiable(a.dtype())) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  if (a.dtype() == DType::Bool || (rtol == 0 && atol == 0)) return close;
  // Integers are compared in the default float dtype, as PyTorch does (no
  // overflow in a - b).
  const Tensor x = is_differentiable(a.dtype()) ? a : a.to(default_float_dtype());
  const Tensor y = is_differentiable(b.dtype()) ? b : b.to(default_float_dtype());
  const Tensor error = abs(sub(x, y));
  const Tensor allowed = add(number(atol), abs(mul(number(rtol), y)));
  return logical_or(close, logical_and(isfinite(error), le(error, allowed)));
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan)).item().to<bool>();
}

}  // namespace ember
