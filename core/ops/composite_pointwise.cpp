// Pointwise composites (core/ops/composite_pointwise.h).
#include <ember/core/ops/composite_pointwise.h>

#include <cmath>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/composite_detail.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/unary.h>
#include <ember/core/type_promotion.h>

namespace ember {

using composite::as_op;

namespace {

void check_defined(const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) EMBER_CHECK(t->defined(), ValueError, op, ": got an undefined tensor");
}

void check_no_integer_division(const char* op, const Tensor& t1, const Tensor& t2) {
  EMBER_CHECK(!(is_integral(t1.dtype(), true) && is_integral(t2.dtype(), true)), Error, op,
              ": integer division with addcdiv is no longer supported (tensor1 is ", dtype_name(t1.dtype()),
              ", tensor2 is ", dtype_name(t2.dtype()), "); for the historic behavior use (input + value * "
              "trunc(tensor1 / tensor2)).to(input.dtype)");
}

// PyTorch's kernels cast value to the result dtype first: 2.5 is 2 for integers.
Scalar value_for(const Scalar& value, const Tensor& input, const Tensor& t1, const Tensor& t2) {
  const DType dt = result_type({input, t1, t2});
  return is_integral(dt, true) && value.is_floating() ? Scalar(value.to_int()) : value;
}

}  // namespace

Tensor addcmul(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  check_defined("addcmul", {&input, &tensor1, &tensor2});
  return as_op("addcmul", [&] { return add(input, mul(tensor1, tensor2), value_for(value, input, tensor1, tensor2)); });
}

Tensor addcdiv(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  check_defined("addcdiv", {&input, &tensor1, &tensor2});
  check_no_integer_division("addcdiv", tensor1, tensor2);
  return as_op("addcdiv", [&] { return add(input, div(tensor1, tensor2), value); });
}

Tensor& addcmul_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  check_defined("addcmul_", {&self, &tensor1, &tensor2});
  return as_op("addcmul_", [&]() -> Tensor& {
    return self.add_(mul(tensor1, tensor2), value_for(value, self, tensor1, tensor2));
  });
}

Tensor& addcdiv_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  check_defined("addcdiv_", {&self, &tensor1, &tensor2});
  check_no_integer_division("addcdiv_", tensor1, tensor2);
  return as_op("addcdiv_", [&]() -> Tensor& { return self.add_(div(tensor1, tensor2), value); });
}

Tensor logit(const Tensor& x, std::optional<double> eps) {
  check_defined("logit", {&x});
  const bool clamped = eps && *eps >= 0;  // a negative eps clamps nothing, as PyTorch
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    Tensor z = x.to(to_float_dtype(x.dtype()));
    if (clamped) z = clamp(z, Scalar(*eps), Scalar(1.0 - *eps));
    out = as_op("logit", [&] { return log(div(z, sub(scalar_tensor(1), z))); });
  }
  if (is_floating(x.dtype()) && autograd::any_requires_grad({x})) {
    // PyTorch's gradient: 1 / (x (1 - x)); outside [eps, 1 - eps] 0 when clamped,
    // NaN outside [0, 1] when not.
    const double e = clamped ? *eps : 0.0;
    autograd::record("LogitBackward0", {x}, {out}, {x},
                     [clamped, e](const autograd::TensorList& g, const autograd::TensorList& s,
                                  const std::vector<bool>&) {
                       const Tensor& v = s[0];
                       const Tensor grad = div(g[0], mul(v, sub(scalar_tensor(1.0), v)));
                       const Tensor outside = logical_or(lt(v, scalar_tensor(e)), gt(v, scalar_tensor(1.0 - e)));
                       const Tensor fill = clamped ? zeros_like(grad) : full_like(grad, Scalar(NAN));
                       return autograd::TensorList{where(outside, fill, grad)};
                     });
  }
  return out;
}

Tensor& logit_(Tensor& self, std::optional<double> eps) {
  check_defined("logit_", {&self});
  autograd::check_inplace(self, "logit_");
  EMBER_CHECK(is_floating(self.dtype()), Error, "logit_: result type ", dtype_name(to_float_dtype(self.dtype())),
              " can't be cast to the desired output type ", dtype_name(self.dtype()));
  // Under autograd the graph reads a copy: self's old values are saved, and self is overwritten.
  return assign_inplace(self, logit(autograd::any_requires_grad({self}) ? self.clone() : self, eps));
}

Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim) {
  check_defined("linalg.cross", {&a, &b});
  EMBER_CHECK(a.dim() == b.dim(), Error, "linalg.cross: inputs must have the same number of dimensions, got shapes ",
              a.shape_str(), " and ", b.shape_str());
  EMBER_CHECK(a.dtype() == b.dtype(), Error, "linalg.cross: expected both inputs to have the same dtype, got ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  const int64_t d = wrap_dim(dim, a.dim(), "linalg.cross");
  EMBER_CHECK(a.dim() > 0 && a.size(d) == 3 && b.size(d) == 3, Error, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", a.dim() ? a.size(d) : 0, " and ", b.dim() ? b.size(d) : 0, " (shapes ",
              a.shape_str(), " and ", b.shape_str(), ")");
  // c_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}, indices mod 3: rolled copies.
  return as_op("linalg.cross", [&] {
    auto r = [d](const Tensor& t, int64_t shift) { return roll(t, {shift}, {d}); };
    return sub(mul(r(a, -1), r(b, -2)), mul(r(a, -2), r(b, -1)));
  });
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  check_defined("cross", {&a, &b});
  if (dim) return linalg_cross(a, b, *dim);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), "cross");
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 3) return linalg_cross(a, b, static_cast<int64_t>(d));
  }
  throw Error(str("cross: no dimension of size 3 in input (shapes ", a.shape_str(), " and ", b.shape_str(), ")"));
}

Tensor logspace(double start, double end, int64_t steps, double base, std::optional<DType> dtype, Device device) {
  EMBER_CHECK(steps >= 0, Error, "logspace: number of steps must be non-negative, got ", steps);
  const Tensor exponents = linspace(start, end, steps, DType::Float64, device);
  return pow(Scalar(base), exponents).to(dtype.value_or(default_float_dtype()));
}

}  // namespace ember
