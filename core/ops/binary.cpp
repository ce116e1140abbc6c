// Binary elementwise ops: argument checks, promotion, the kernel call and the
// autograd node. The ternary selects (where, lerp, masked_fill) and the
// in-place forms live in binary_select.cpp and binary_inplace.cpp.
#include <ember/core/ops/binary.h>
#include <ember/core/ops/complex.h>

#include <ember/autograd/functions/binary.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/binary.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary_detail.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/binary.h>

namespace ember {

namespace functions = autograd::functions;

namespace binary_detail {

void check_defined(const char* op, const std::vector<Tensor>& inputs) {
  for (const auto& t : inputs) EMBER_CHECK(t.defined(), ValueError, op, ": got an undefined tensor");
}

void check_backend(const char* op, Device dev) {
  EMBER_CHECK(dev.is_cpu() || dev.is_cuda(), NotImplementedError, op, ": no kernel for device ", dev.str());
}

namespace kernel {
namespace {
// A CPU kernel's operand on the CPU (a 0-d CUDA tensor may join CPU tensors).
Tensor host(const Tensor& t) { return t.defined() && !t.device().is_cpu() ? t.cpu() : t; }
}  // namespace

void binary(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (out.device().is_cuda()) return cuda::binary(op, out, a, b, alpha);
  cpu::binary(op, out, host(a), host(b), alpha);
}
void logical_not(Tensor& out, const Tensor& a) {
  out.device().is_cuda() ? cuda::logical_not(out, a) : cpu::logical_not(out, a);
}
void bitwise_not(Tensor& out, const Tensor& a) {
  out.device().is_cuda() ? cuda::bitwise_not(out, a) : cpu::bitwise_not(out, a);
}
void where(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (out.device().is_cuda()) return cuda::where(out, cond, a, b);
  cpu::where(out, host(cond), host(a), host(b));
}
void lerp(Tensor& out, const Tensor& start, const Tensor& end, const Tensor& weight) {
  if (out.device().is_cuda()) return cuda::lerp(out, start, end, weight);
  cpu::lerp(out, host(start), host(end), host(weight));
}
void masked_fill(Tensor& out, const Tensor& self, const Tensor& mask, const Scalar& value) {
  if (out.device().is_cuda()) return cuda::masked_fill(out, self, mask, value);
  cpu::masked_fill(out, host(self), host(mask), value);
}
}  // namespace kernel

namespace {

// An operand cast for the kernel. A number (a 0-d CPU tensor) with a half
// tensor on CUDA stays float for add, sub, mul and div, as in PyTorch: x * 0.1
// multiplies by 0.1f and rounds once (the CPU computes half types in float).
Tensor kernel_input(BinaryOp op, const Tensor& t, DType compute, Device dev) {
  const bool float_number = dev.is_cuda() && is_half(compute) && t.device().is_cpu() && t.dim() == 0 &&
                            takes_float_number(op);
  return t.to(float_number ? DType::Float32 : compute);
}

}  // namespace

Tensor run_binary(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, DType dtype,
                  const Scalar& alpha) {
  const Device dev = common_device(name, {a, b});
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  check_backend(name, dev);
  // The casts feed the kernel only; the op's own node covers the inputs.
  autograd::NoGradGuard no_grad;
  const bool to_bool = is_bool_result(op);
  // CUDA's arithmetic kernels compute half types in float themselves.
  const DType compute = is_half(dtype) && !(dev.is_cuda() && !to_bool) ? DType::Float32 : dtype;
  Tensor out = empty_like_operands(shape, to_bool ? DType::Bool : compute, dev, {a, b});
  kernel::binary(op, out, kernel_input(op, a, compute, dev), kernel_input(op, b, compute, dev), alpha);
  return to_bool || compute == dtype ? out : out.to(dtype);
}

void run_binary_into(BinaryOp op, Tensor& self, const Tensor& other, const Scalar& alpha) {
  autograd::NoGradGuard no_grad;
  kernel::binary(op, self, self, kernel_input(op, other, self.dtype(), self.device()), alpha);
}

DType add_type(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_defined(op, {a, b});
  const DType dt = result_type(a, b);
  EMBER_CHECK(!alpha.is_bool() || dt == DType::Bool, Error, op,
              ": boolean alpha only supported for boolean results (got ", dtype_name(dt), ")");
  EMBER_CHECK(is_floating(dt) || !alpha.is_floating(), Error, op,
              ": for integral input tensors, argument alpha must not be a floating point number (got ",
              dtype_name(dt), ")");
  return dt;
}

DType sub_type(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_defined(op, {a, b});
  EMBER_CHECK(a.dtype() != DType::Bool || b.dtype() != DType::Bool, Error, op,
              ": subtraction, the `-` operator, with two bool tensors is not supported; use the `^` or "
              "logical_xor() operator instead");
  EMBER_CHECK(a.dtype() != DType::Bool && b.dtype() != DType::Bool, Error, op,
              ": subtraction, the `-` operator, with a bool tensor is not supported; to invert a mask use the "
              "`~` or logical_not() operator instead");
  return add_type(op, a, b, alpha);
}

DType mul_type(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(op, {a, b});
  return result_type(a, b);
}

BinaryOp div_kind(const char* op, const std::optional<std::string>& rounding_mode) {
  if (!rounding_mode) return BinaryOp::Div;
  if (*rounding_mode == "trunc") return BinaryOp::DivTrunc;
  if (*rounding_mode == "floor") return BinaryOp::DivFloor;
  throw Error(str(op, ": expected rounding_mode to be one of None, 'trunc', or 'floor' but found '",
                  *rounding_mode, "'"));
}

DType div_type(const char* op, BinaryOp kind, const Tensor& a, const Tensor& b) {
  check_defined(op, {a, b});
  const DType dt = result_type(a, b);
  if (kind == BinaryOp::Div) return to_float_dtype(dt);
  EMBER_CHECK(dt != DType::Bool, Error, op, ": ", kind == BinaryOp::DivTrunc ? "trunc" : "floor",
              " division is not implemented for bool tensors");
  return dt;
}

DType remainder_type(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(op, {a, b});
  const DType dt = result_type(a, b);
  EMBER_CHECK(dt != DType::Bool, Error, op, ": not implemented for bool tensors");
  return dt;
}

}  // namespace binary_detail

using namespace binary_detail;

namespace {
// Comparisons and logical ops: inputs promoted to one dtype, a bool result.
Tensor compare(BinaryOp op, const char* name, const Tensor& a, const Tensor& b) {
  check_defined(name, {a, b});
  return run_binary(op, name, a, b, result_type(a, b));
}

Tensor bitwise(BinaryOp op, const char* name, const Tensor& a, const Tensor& b) {
  check_defined(name, {a, b});
  const DType dt = result_type(a, b);
  EMBER_CHECK(is_integral(dt, /*include_bool=*/true), Error, name, ": not implemented for ", dtype_name(dt),
              " tensors (only integer and bool)");
  return run_binary(op, name, a, b, dt);
}
}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (complex_ops::any_complex(a, b)) return complex_ops::add(a, b, alpha.to_double());
  const DType dt = add_type("add", a, b, alpha);
  Tensor out = run_binary(BinaryOp::Add, "add", a, b, dt, alpha);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("AddBackward0", {a, b}, {out}, {}, functions::add_backward(alpha));
  }
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  if (complex_ops::any_complex(a, b)) return complex_ops::sub(a, b, alpha.to_double());
  const DType dt = sub_type("sub", a, b, alpha);
  Tensor out = run_binary(BinaryOp::Sub, "sub", a, b, dt, alpha);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("SubBackward0", {a, b}, {out}, {}, functions::sub_backward(alpha));
  }
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  if (complex_ops::any_complex(a, b)) return complex_ops::mul(a, b);
  const DType dt = mul_type("mul", a, b);
  Tensor out = run_binary(BinaryOp::Mul, "mul", a, b, dt);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("MulBackward0", {a, b}, {out}, {a, b}, functions::mul_backward());
  }
  return out;
}

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string> rounding_mode) {
  if (complex_ops::any_complex(a, b)) {
    EMBER_CHECK(!rounding_mode, Error, "div: rounding_mode is not supported for complex tensors");
    return complex_ops::div(a, b);
  }
  const BinaryOp kind = div_kind("div", rounding_mode);
  const DType dt = div_type("div", kind, a, b);
  Tensor out = run_binary(kind, "div", a, b, dt);
  if (autograd::any_requires_grad({a, b})) {
    if (kind == BinaryOp::Div) {
      autograd::record("DivBackward0", {a, b}, {out}, {a, b}, functions::div_backward());
    } else {
      autograd::record("DivBackward1", {a, b}, {out}, {}, functions::rounding_div_backward());
    }
  }
  return out;
}

Tensor floor_divide(const Tensor& a, const Tensor& b) {
  const DType dt = div_type("floor_divide", BinaryOp::DivFloor, a, b);
  Tensor out = run_binary(BinaryOp::DivFloor, "floor_divide", a, b, dt);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("FloorDivideBackward0", {a, b}, {out}, {}, functions::rounding_div_backward());
  }
  return out;
}

Tensor remainder(const Tensor& a, const Tensor& b) {
  const DType dt = remainder_type("remainder", a, b);
  Tensor out = run_binary(BinaryOp::Remainder, "remainder", a, b, dt);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("RemainderBackward0", {a, b}, {out}, {a, b}, functions::remainder_backward());
  }
  return out;
}

Tensor maximum(const Tensor& a, const Tensor& b) {
  check_defined("maximum", {a, b});
  Tensor out = run_binary(BinaryOp::Maximum, "maximum", a, b, result_type(a, b));
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("MaximumBackward0", {a, b}, {out}, {a, b}, functions::maximum_backward());
  }
  return out;
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  check_defined("minimum", {a, b});
  Tensor out = run_binary(BinaryOp::Minimum, "minimum", a, b, result_type(a, b));
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("MinimumBackward0", {a, b}, {out}, {a, b}, functions::minimum_backward());
  }
  return out;
}

Tensor eq(const Tensor& a, const Tensor& b) {
  return complex_ops::any_complex(a, b) ? complex_ops::eq(a, b) : compare(BinaryOp::Eq, "eq", a, b);
}

bool equal(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, "equal: got an undefined tensor");
  common_device("equal", {a, b});  // raises, naming both devices, when they differ
  if (a.shape() != b.shape()) return false;
  if (a.device().is_cpu() && a.dtype() == b.dtype() && !is_half(a.dtype()) && !is_complex(a.dtype()) &&
      a.is_contiguous() && b.is_contiguous()) {
    return cpu::all_equal(a, b);  // stops at the first difference
  }
  autograd::NoGradGuard no_grad;
  return all(compare(BinaryOp::Eq, "equal", a, b)).item().to<bool>();
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return complex_ops::any_complex(a, b) ? complex_ops::ne(a, b) : compare(BinaryOp::Ne, "ne", a, b);
}
Tensor lt(const Tensor& a, const Tensor& b) { return compare(BinaryOp::Lt, "lt", a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(BinaryOp::Le, "le", a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(BinaryOp::Gt, "gt", a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(BinaryOp::Ge, "ge", a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return compare(BinaryOp::LogicalAnd, "logical_and", a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return compare(BinaryOp::LogicalOr, "logical_or", a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return compare(BinaryOp::LogicalXor, "logical_xor", a, b); }
Tensor bitwise_and(const Tensor& a, const Tensor& b) { return bitwise(BinaryOp::BitwiseAnd, "bitwise_and", a, b); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return bitwise(BinaryOp::BitwiseOr, "bitwise_or", a, b); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return bitwise(BinaryOp::BitwiseXor, "bitwise_xor", a, b); }

Tensor logical_not(const Tensor& a) {
  check_defined("logical_not", {a});
  check_backend("logical_not", a.device());
  autograd::NoGradGuard no_grad;
  Tensor out = empty(a.shape(), DType::Bool, a.device());
  kernel::logical_not(out, is_half(a.dtype()) ? a.to(DType::Float32) : a);
  return out;
}

Tensor bitwise_not(const Tensor& a) {
  check_defined("bitwise_not", {a});
  EMBER_CHECK(is_integral(a.dtype(), /*include_bool=*/true), Error, "bitwise_not: not implemented for ",
              dtype_name(a.dtype()), " tensors (only integer and bool)");
  check_backend("bitwise_not", a.device());
  Tensor out = empty(a.shape(), a.dtype(), a.device());
  kernel::bitwise_not(out, a);
  return out;
}

Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const { return ember::add(*this, other, alpha); }
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const { return ember::sub(*this, other, alpha); }
Tensor Tensor::mul(const Tensor& other) const { return ember::mul(*this, other); }
Tensor Tensor::div(const Tensor& other, std::optional<std::string> rm) const { return ember::div(*this, other, rm); }
Tensor Tensor::floor_divide(const Tensor& other) const { return ember::floor_divide(*this, other); }
Tensor Tensor::remainder(const Tensor& other) const { return ember::remainder(*this, other); }
Tensor Tensor::maximum(const Tensor& other) const { return ember::maximum(*this, other); }
Tensor Tensor::minimum(const Tensor& other) const { return ember::minimum(*this, other); }
Tensor Tensor::eq(const Tensor& other) const { return ember::eq(*this, other); }
bool Tensor::equal(const Tensor& other) const { return ember::equal(*this, other); }
Tensor Tensor::ne(const Tensor& other) const { return ember::ne(*this, other); }
Tensor Tensor::lt(const Tensor& other) const { return ember::lt(*this, other); }
Tensor Tensor::le(const Tensor& other) const { return ember::le(*this, other); }
Tensor Tensor::gt(const Tensor& other) const { return ember::gt(*this, other); }
Tensor Tensor::ge(const Tensor& other) const { return ember::ge(*this, other); }
Tensor Tensor::logical_and(const Tensor& other) const { return ember::logical_and(*this, other); }
Tensor Tensor::logical_or(const Tensor& other) const { return ember::logical_or(*this, other); }
Tensor Tensor::logical_xor(const Tensor& other) const { return ember::logical_xor(*this, other); }
Tensor Tensor::logical_not() const { return ember::logical_not(*this); }

}  // namespace ember
