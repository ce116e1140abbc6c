// The extra math functions: dtype rules, the kernel call (CPU or CUDA) and
// the autograd node; formulas in autograd/functions/unary_math.cpp.
#include <ember/core/ops/unary_math.h>

#include <ember/autograd/functions/unary_math.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/autocast.h>
#include <ember/core/cpu/unary_math.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/copy.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/unary_math.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

// The CPU kernels take float32/float64 (half types are computed in float32
// and rounded back); the CUDA kernels take the half types directly.
DType work_dtype(DType dtype, Device device) {
  return is_half(dtype) && !device.is_cuda() ? DType::Float32 : dtype;
}

Tensor unary_op(MathOp op, const char* name, const char* node, const Tensor& x_in) {
  EMBER_CHECK(x_in.defined(), ValueError, name, ": got an undefined tensor");
  if (autocast::Scope ac{name, x_in}; ac) return unary_op(op, name, node, ac[0]);
  const Tensor& x = x_in;
  if (is_complex(x.dtype())) throw_unsupported_dtype(x.dtype(), name, "");
  const DType dtype = to_float_dtype(x.dtype());
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    const DType work = work_dtype(dtype, x.device());
    Tensor o = empty(x.shape(), work, x.device());
    const Tensor in = x.to(work);
    x.device().is_cuda() ? cuda::unary_math(op, o, in) : cpu::unary_math(op, o, in);
    out = work == dtype ? o : o.to(dtype);
  }
  if (autograd::any_requires_grad({x})) {
    const Tensor saved = functions::unary_math_saves_output(op) ? out : x;
    autograd::record(node, {x}, {out}, {saved}, functions::unary_math_backward(op));
  }
  return out;
}

Tensor binary_op(MathOp2 op, const char* name, const char* node, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, name, ": got an undefined tensor");
  const Device device = common_device(name, {a, b});
  const DType dtype = to_float_dtype(result_type(a, b));
  if (is_complex(dtype)) throw_unsupported_dtype(dtype, name, "");
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    const DType work = work_dtype(dtype, device);
    Tensor o = empty(shape, work, device);
    // A CPU number (0-d) operand stays where it is: the CUDA launcher reads its value.
    auto operand = [&](const Tensor& t) {
      return device.is_cuda() && t.device().is_cpu() && t.dim() == 0 ? t.to(work) : t.to(device, work);
    };
    const Tensor x = operand(a), y = operand(b);
    device.is_cuda() ? cuda::binary_math(op, o, x, y) : cpu::binary_math(op, o, x, y);
    out = work == dtype ? o : o.to(dtype);
  }
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(node, {a, b}, {out}, {a, b, out}, functions::binary_math_backward(op));
  }
  return out;
}

}  // namespace

Tensor log2(const Tensor& x) { return unary_op(MathOp::Log2, "log2", "Log2Backward0", x); }
Tensor log10(const Tensor& x) { return unary_op(MathOp::Log10, "log10", "Log10Backward0", x); }
Tensor exp2(const Tensor& x) { return unary_op(MathOp::Exp2, "exp2", "Exp2Backward0", x); }
Tensor sinh(const Tensor& x) {
  return is_complex(x.dtype()) ? complex_ops::sinh(x) : unary_op(MathOp::Sinh, "sinh", "SinhBackward0", x);
}
Tensor cosh(const Tensor& x) {
  return is_complex(x.dtype()) ? complex_ops::cosh(x) : unary_op(MathOp::Cosh, "cosh", "CoshBackward0", x);
}
Tensor tan(const Tensor& x) {
  return is_complex(x.dtype()) ? complex_ops::tan(x) : unary_op(MathOp::Tan, "tan", "TanBackward0", x);
}
Tensor asin(const Tensor& x) { return unary_op(MathOp::Asin, "asin", "AsinBackward0", x); }
Tensor acos(const Tensor& x) { return unary_op(MathOp::Acos, "acos", "AcosBackward0", x); }
Tensor atan(const Tensor& x) { return unary_op(MathOp::Atan, "atan", "AtanBackward0", x); }
Tensor asinh(const Tensor& x) { return unary_op(MathOp::Asinh, "asinh", "AsinhBackward0", x); }
Tensor acosh(const Tensor& x) { return unary_op(MathOp::Acosh, "acosh", "AcoshBackward0", x); }
Tensor atanh(const Tensor& x) { return unary_op(MathOp::Atanh, "atanh", "AtanhBackward0", x); }
Tensor erfc(const Tensor& x) { return unary_op(MathOp::Erfc, "erfc", "ErfcBackward0", x); }
Tensor erfinv(const Tensor& x) { return unary_op(MathOp::Erfinv, "erfinv", "ErfinvBackward0", x); }
Tensor lgamma(const Tensor& x) { return unary_op(MathOp::Lgamma, "lgamma", "LgammaBackward0", x); }
Tensor digamma(const Tensor& x) { return unary_op(MathOp::Digamma, "digamma", "DigammaBackward0", x); }
Tensor trigamma(const Tensor& x) { return unary_op(MathOp::Trigamma, "trigamma", "PolygammaBackward0", x); }

Tensor trunc(const Tensor& x) {
  EMBER_CHECK(x.defined(), ValueError, "trunc: got an undefined tensor");
  if (!is_floating(x.dtype())) {
    EMBER_CHECK(x.dtype() != DType::Bool, Error, "trunc: not implemented for bool tensors");
    return x.clone();  // an integer is already whole
  }
  return unary_op(MathOp::Trunc, "trunc", "TruncBackward0", x);
}

Tensor frac(const Tensor& x) {
  EMBER_CHECK(x.defined(), ValueError, "frac: got an undefined tensor");
  EMBER_CHECK(is_floating(x.dtype()), TypeError, "frac: expected a floating point tensor, got ",
              dtype_name(x.dtype()));
  return unary_op(MathOp::Frac, "frac", "FracBackward0", x);
}

Tensor atan2(const Tensor& a, const Tensor& b) { return binary_op(MathOp2::Atan2, "atan2", "Atan2Backward0", a, b); }
Tensor hypot(const Tensor& a, const Tensor& b) { return binary_op(MathOp2::Hypot, "hypot", "HypotBackward0", a, b); }
Tensor copysign(const Tensor& a, const Tensor& b) {
  return binary_op(MathOp2::Copysign, "copysign", "CopysignBackward0", a, b);
}
Tensor logaddexp(const Tensor& a, const Tensor& b) {
  return binary_op(MathOp2::LogAddExp, "logaddexp", "LogaddexpBackward0", a, b);
}
Tensor logaddexp2(const Tensor& a, const Tensor& b) {
  return binary_op(MathOp2::LogAddExp2, "logaddexp2", "Logaddexp2Backward0", a, b);
}
Tensor xlogy(const Tensor& x, const Tensor& y) { return binary_op(MathOp2::Xlogy, "xlogy", "XlogyBackward0", x, y); }

namespace {
// The fused activation gradients: binary_op under no-grad, so no node is
// recorded (see the header); its node name is therefore never used.
Tensor fused_gradient(MathOp2 op, const char* name, const Tensor& grad, const Tensor& x) {
  autograd::NoGradGuard no_grad;
  return binary_op(op, name, "", grad, x);
}
}  // namespace

Tensor gelu_backward(const Tensor& grad, const Tensor& x, const std::string& approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", ValueError,
              "gelu_backward: approximate must be 'none' or 'tanh', got '", approximate, "'");
  return fused_gradient(approximate == "tanh" ? MathOp2::GeluTanhBackward : MathOp2::GeluBackward, "gelu_backward",
                        grad, x);
}
Tensor silu_backward(const Tensor& grad, const Tensor& x) {
  return fused_gradient(MathOp2::SiluBackward, "silu_backward", grad, x);
}
Tensor tanh_backward(const Tensor& grad, const Tensor& y) {
  return fused_gradient(MathOp2::TanhBackward, "tanh_backward", grad, y);
}
Tensor sigmoid_backward(const Tensor& grad, const Tensor& y) {
  return fused_gradient(MathOp2::SigmoidBackward, "sigmoid_backward", grad, y);
}

Tensor fmod(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, "fmod: got an undefined tensor");
  const DType dtype = result_type(a, b);
  if (!is_floating(dtype)) {
    // C's remainder for integers: a - trunc(a / b) * b (division by zero raises there).
    EMBER_CHECK(dtype != DType::Bool, Error, "fmod: not implemented for bool tensors");
    return sub(a, mul(div(a, b, std::string("trunc")), b));
  }
  return binary_op(MathOp2::Fmod, "fmod", "FmodBackward0", a, b);
}

}  // namespace ember
