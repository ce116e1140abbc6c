// Binary elementwise ops: argument checks, promotion, the kernel call and the
// autograd node.
#include <ember/core/ops/binary.h>

#include <ember/autograd/functions/binary.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/binary.h>
#include <ember/core/error.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/type_promotion.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

// Runs `op` on a and b cast to `compute` (float32 for half types on the CPU)
// and returns the result in `out_dtype`.
Tensor run_binary(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, DType out_dtype,
                  const Scalar& alpha = 1) {
  const Device dev = common_device(name, {a, b});
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  const DType compute = is_half(out_dtype) ? DType::Float32 : out_dtype;
  Tensor out = empty(shape, compute, dev);
  EMBER_CHECK(dev.is_cpu(), NotImplementedError, name, ": only the CPU is supported in this build");
  cpu::binary(op, out, a.to(compute), b.to(compute), alpha);
  return compute == out_dtype ? out : out.to(out_dtype);
}

void check_defined(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, op, ": got an undefined tensor");
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_defined("add", a, b);
  const DType dt = result_type(a, b);
  EMBER_CHECK(dt != DType::Bool || alpha.to_bool(), TypeError, "add: boolean tensors are not supported");
  Tensor out = run_binary(BinaryOp::Add, "add", a, b, dt, alpha);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("AddBackward0", {a, b}, {out}, {}, functions::add_backward(alpha));
  }
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_defined("sub", a, b);
  const DType dt = result_type(a, b);
  EMBER_CHECK(dt != DType::Bool, TypeError,
              "sub: subtraction with two bool tensors is not supported; use logical_xor() instead");
  Tensor out = run_binary(BinaryOp::Sub, "sub", a, b, dt, alpha);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("SubBackward0", {a, b}, {out}, {}, functions::sub_backward(alpha));
  }
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  check_defined("mul", a, b);
  const DType dt = result_type(a, b);
  Tensor out = run_binary(BinaryOp::Mul, "mul", a, b, dt);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("MulBackward0", {a, b}, {out}, {a, b}, functions::mul_backward());
  }
  return out;
}

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string> rounding_mode) {
  check_defined("div", a, b);
  EMBER_CHECK(!rounding_mode, NotImplementedError, "div: rounding_mode is not implemented yet");
  const DType dt = to_float_dtype(result_type(a, b));
  Tensor out = run_binary(BinaryOp::Div, "div", a, b, dt);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("DivBackward0", {a, b}, {out}, {a, b}, functions::div_backward());
  }
  return out;
}

// ---- in-place forms: compute out of place, write back, take over the history.
namespace {
Tensor& assign_result(Tensor& self, const Tensor& result, const char* op) {
  autograd::check_inplace(self, op);
  EMBER_CHECK(result.shape() == self.shape(), Error, op, ": output with shape ", shape_str(self.shape()),
              " doesn't match the broadcast shape ", shape_str(result.shape()));
  EMBER_CHECK(promote_types(result.dtype(), self.dtype()) == self.dtype() || is_floating(self.dtype()),
              TypeError, op, ": result type ", dtype_name(result.dtype()),
              " can't be cast to the desired output type ", dtype_name(self.dtype()));
  {
    autograd::NoGradGuard no_grad;
    Tensor dst = self;
    copy_(dst, result);
  }
  autograd::rebase_history(self, result.to(self.dtype()));
  return self;
}
}  // namespace

Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const { return ember::add(*this, other, alpha); }
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const { return ember::sub(*this, other, alpha); }
Tensor Tensor::mul(const Tensor& other) const { return ember::mul(*this, other); }
Tensor Tensor::div(const Tensor& other, std::optional<std::string> rm) const { return ember::div(*this, other, rm); }
Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) { return assign_result(*this, ember::add(*this, other, alpha), "add_"); }
Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) { return assign_result(*this, ember::sub(*this, other, alpha), "sub_"); }
Tensor& Tensor::mul_(const Tensor& other) { return assign_result(*this, ember::mul(*this, other), "mul_"); }
Tensor& Tensor::div_(const Tensor& other, std::optional<std::string> rm) { return assign_result(*this, ember::div(*this, other, rm), "div_"); }

}  // namespace ember
