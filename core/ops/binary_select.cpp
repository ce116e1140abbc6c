// The binary family's selects: where, lerp and masked_fill (front-ends and
// Tensor methods).
#include <ember/autograd/functions/binary.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/binary.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/binary_detail.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>

namespace ember {

namespace functions = autograd::functions;

namespace binary_detail {

DType lerp_type(const char* op, const Tensor& start, const Tensor& end, const Tensor& weight) {
  check_defined(op, {start, end, weight});
  const DType dt = start.dtype();
  EMBER_CHECK(is_floating(dt), Error, op, ": expected floating point tensors, got start of dtype ", dtype_name(dt));
  EMBER_CHECK(end.dtype() == dt, Error, op, ": expected dtype ", dtype_name(dt), " for `end` but got dtype ",
              dtype_name(end.dtype()));
  EMBER_CHECK(weight.impl()->wrapped_number || weight.dtype() == dt, Error, op, ": expected dtype ",
              dtype_name(dt), " for `weight` but got dtype ", dtype_name(weight.dtype()));
  return dt;
}

Scalar masked_fill_value(const char* op, const Tensor& a, const Tensor& mask, const Tensor& value) {
  check_defined(op, {a, mask, value});
  EMBER_CHECK(mask.dtype() == DType::Bool, Error, op, ": only supports boolean masks, but got mask with dtype ",
              dtype_name(mask.dtype()));
  EMBER_CHECK(value.dim() == 0, Error, op, ": only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s)");
  return value.item();
}

}  // namespace binary_detail

using namespace binary_detail;

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_defined("where", {cond, a, b});
  EMBER_CHECK(cond.dtype() == DType::Bool, Error,
              "where: expected condition to be a boolean tensor, but got a tensor with dtype ",
              dtype_name(cond.dtype()));
  const Device dev = common_device("where", {cond, a, b});
  check_backend("where", dev);
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  const DType dt = result_type(a, b);
  if (is_complex(dt)) {
    // Selects (real, imaginary) pairs: the condition gets a trailing dim for the pair.
    const Tensor parts = where(unsqueeze(cond, -1), view_as_real(a.to(dt)), view_as_real(b.to(dt)));
    return view_as_complex(parts.contiguous());
  }
  Tensor out = empty(shape, dt, dev);
  {
    autograd::NoGradGuard no_grad;
    kernel::where(out, cond, a.to(dt), b.to(dt));
  }
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("WhereBackward0", {a, b}, {out}, {cond}, functions::where_backward());
  }
  return out;
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  const DType dt = lerp_type("lerp", start, end, weight);
  const Device dev = common_device("lerp", {start, end, weight});
  check_backend("lerp", dev);
  const Shape shape =
      broadcast_shapes(broadcast_shapes(start.shape(), end.shape(), "lerp"), weight.shape(), "lerp");
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    const DType compute = is_half(dt) ? DType::Float32 : dt;
    out = empty(shape, compute, dev);
    kernel::lerp(out, start.to(compute), end.to(compute), weight.to(compute));
    if (compute != dt) out = out.to(dt);
  }
  if (autograd::any_requires_grad({start, end, weight})) {
    autograd::record(weight.impl()->wrapped_number ? "LerpBackward0" : "LerpBackward1", {start, end, weight},
                     {out}, {start, end, weight}, functions::lerp_backward());
  }
  return out;
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value) {
  if (a.defined() && is_complex(a.dtype())) {
    EMBER_CHECK(value.defined() && value.dim() == 0, Error, "masked_fill: only supports a 0-dimensional value tensor, "
                "but got one with ", value.defined() ? value.dim() : 0, " dimensions");
    return where(mask, value.to(a.dtype()), a);
  }
  const Scalar v = masked_fill_value("masked_fill", a, mask, value);
  const Device dev = common_device("masked_fill", {a, mask});
  check_backend("masked_fill", dev);
  Tensor out = empty(broadcast_shapes(a.shape(), mask.shape(), "masked_fill"), a.dtype(), dev);
  kernel::masked_fill(out, a, mask, v);
  if (autograd::any_requires_grad({a, value})) {
    autograd::record(value.impl()->wrapped_number ? "MaskedFillBackward0" : "MaskedFillBackward1", {a, value},
                     {out}, {mask}, functions::masked_fill_backward());
  }
  return out;
}

Tensor Tensor::where(const Tensor& condition, const Tensor& other) const {
  return ember::where(condition, *this, other);
}
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return ember::lerp(*this, end, weight); }
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  return ember::masked_fill(*this, mask, value);
}

}  // namespace ember
