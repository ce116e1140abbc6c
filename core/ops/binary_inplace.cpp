// In-place forms of the binary family (add_, mul_, masked_fill_, lerp_, ...).
//
// Fast path, the one optimizers hit: when no autograd is needed, the result
// dtype is self's and the broadcast shape is self's, the kernel writes
// straight into self. Otherwise the op runs out of place and the result is
// copied back, and self takes over the result's autograd history.
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/binary.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/binary_detail.h>
#include <ember/core/ops/copy.h>
#include <ember/core/type_promotion.h>

namespace ember {

using namespace binary_detail;

namespace {

// Byte range [first, last) that t's elements occupy.
std::pair<const char*, const char*> byte_range(const Tensor& t) {
  const char* base = static_cast<const char*>(t.data_ptr());
  int64_t lo = 0, hi = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t span = (t.shape()[d] - 1) * t.strides()[d];
    (span < 0 ? lo : hi) += span;
  }
  const int64_t item = static_cast<int64_t>(t.element_size());
  return {base + lo * item, base + hi * item + item};
}

// Reading `input` while writing self in one elementwise loop is safe when it
// is in other memory, or is exactly self (x.mul_(x)).
bool can_read_while_writing(const Tensor& self, const Tensor& input) {
  if (input.numel() == 0 || self.numel() == 0) return true;
  const auto [s0, s1] = byte_range(self);
  const auto [i0, i1] = byte_range(input);
  if (i1 <= s0 || s1 <= i0) return true;
  return input.data_ptr() == self.data_ptr() && input.shape() == self.shape() &&
         input.strides() == self.strides() && input.dtype() == self.dtype();
}

// Checks common to every in-place op, then whether the fast path applies:
// no autograd, result dtype == self's, broadcast shape == self's, and
// inputs that can be read while self is written. `math`: the kernel
// computes (half types then need the float32 slow path).
bool writes_directly(const char* op, const Tensor& self, const std::vector<Tensor>& inputs, DType result,
                     bool math = true) {
  check_no_internal_overlap(self, op);
  autograd::check_inplace(self, op);
  if (result != self.dtype() || (math && is_half(result)) || is_complex(result)) return false;
  std::vector<Tensor> all = inputs;
  all.push_back(self);
  if (autograd::any_requires_grad(all)) return false;
  for (const auto& in : inputs) {
    if (broadcast_shapes(self.shape(), in.shape(), op) != self.shape()) return false;
    // The kernels move a CPU wrapped number to self's device, nothing else.
    if (in.device() != self.device() && !(in.impl()->wrapped_number && in.device().is_cpu())) return false;
    if (!can_read_while_writing(self, in)) return false;
  }
  return true;
}

// Slow path: result computed out of place, written back, history taken over.
Tensor& assign_result(Tensor& self, const Tensor& result, const char* op) {
  autograd::check_inplace(self, op);
  EMBER_CHECK(result.shape() == self.shape(), Error, op, ": output with shape ", shape_str(self.shape()),
              " doesn't match the broadcast shape ", shape_str(result.shape()));
  // Casting down within a category is allowed (float32 += float64, complex64 += complex128), up is not.
  EMBER_CHECK(promote_types(result.dtype(), self.dtype()) == self.dtype() ||
                  (is_floating(self.dtype()) && !is_complex(result.dtype())) || is_complex(self.dtype()),
              Error, op, ": result type ", dtype_name(result.dtype()),
              " can't be cast to the desired output type ", dtype_name(self.dtype()));
  return assign_inplace(self, result);
}

// The self an out-of-place op reads on the slow path: a copy when autograd
// records the op, because ops such as mul save their inputs for backward
// and self is overwritten right after (PyTorch saves the original self too).
Tensor original(const Tensor& self, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> all = inputs;
  all.push_back(self);
  return autograd::any_requires_grad(all) ? self.clone() : self;
}

Tensor& finish_direct(Tensor& self) {
  self.bump_version();
  return self;
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) {
  if (writes_directly("add_", *this, {other}, add_type("add_", *this, other, alpha))) {
    run_binary_into(BinaryOp::Add, *this, other, alpha);
    return finish_direct(*this);
  }
  return assign_result(*this, ember::add(*this, other, alpha), "add_");
}

Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) {
  if (writes_directly("sub_", *this, {other}, sub_type("sub_", *this, other, alpha))) {
    run_binary_into(BinaryOp::Sub, *this, other, alpha);
    return finish_direct(*this);
  }
  return assign_result(*this, ember::sub(*this, other, alpha), "sub_");
}

Tensor& Tensor::mul_(const Tensor& other) {
  if (writes_directly("mul_", *this, {other}, mul_type("mul_", *this, other))) {
    run_binary_into(BinaryOp::Mul, *this, other);
    return finish_direct(*this);
  }
  return assign_result(*this, ember::mul(original(*this, {other}), other), "mul_");
}

Tensor& Tensor::div_(const Tensor& other, std::optional<std::string> rm) {
  const BinaryOp kind = div_kind("div_", rm);
  if (writes_directly("div_", *this, {other}, div_type("div_", kind, *this, other))) {
    run_binary_into(kind, *this, other);
    return finish_direct(*this);
  }
  return assign_result(*this, ember::div(original(*this, {other}), other, rm), "div_");
}

Tensor& Tensor::floor_divide_(const Tensor& other) {
  if (writes_directly("floor_divide_", *this, {other}, div_type("floor_divide_", BinaryOp::DivFloor, *this, other))) {
    run_binary_into(BinaryOp::DivFloor, *this, other);
    return finish_direct(*this);
  }
  return assign_result(*this, ember::floor_divide(*this, other), "floor_divide_");
}

Tensor& Tensor::remainder_(const Tensor& other) {
  if (writes_directly("remainder_", *this, {other}, remainder_type("remainder_", *this, other))) {
    run_binary_into(BinaryOp::Remainder, *this, other);
    return finish_direct(*this);
  }
  return assign_result(*this, ember::remainder(original(*this, {other}), other), "remainder_");
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) {
  if (is_complex(dtype())) return assign_result(*this, ember::masked_fill(*this, mask, value), "masked_fill_");
  const Scalar v = masked_fill_value("masked_fill_", *this, mask, value);
  EMBER_CHECK(broadcast_shapes(shape(), mask.shape(), "masked_fill_") == shape(), Error,
              "masked_fill_: mask of shape ", ember::shape_str(mask.shape()), " cannot be broadcast to the shape ",
              ember::shape_str(shape()), " of the tensor being filled");
  if (writes_directly("masked_fill_", *this, {mask, value}, dtype(), /*math=*/false)) {
    kernel::masked_fill(*this, *this, mask, v);
    return finish_direct(*this);
  }
  return assign_result(*this, ember::masked_fill(*this, mask, value), "masked_fill_");
}

Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  if (writes_directly("lerp_", *this, {end, weight}, lerp_type("lerp_", *this, end, weight))) {
    autograd::NoGradGuard no_grad;
    kernel::lerp(*this, *this, end, weight.to(dtype()));
    return finish_direct(*this);
  }
  return assign_result(*this, ember::lerp(original(*this, {end, weight}), end, weight), "lerp_");
}

}  // namespace ember
