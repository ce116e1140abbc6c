// Unary elementwise ops: dtype rules, the kernel call and the autograd node,
// plus their in-place forms.
#include <ember/core/ops/unary.h>
#include <ember/core/autocast.h>

#include <limits>

#include <ember/autograd/functions/unary.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/meta.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/copy.h>
#include <ember/core/cpu/unary.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/copy.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/unary.h>

namespace ember {

namespace functions = autograd::functions;
using autograd::TensorList;
using autograd::Vjp;

namespace {

// The backend seam: each kernel runs on the device of its output.
namespace kernel {
void unary(UnaryOp op, Tensor& o, const Tensor& in) {
  o.device().is_cuda() ? cuda::unary(op, o, in) : cpu::unary(op, o, in);
}
void softplus(Tensor& o, const Tensor& in, double beta, double threshold) {
  o.device().is_cuda() ? cuda::softplus(o, in, beta, threshold) : cpu::softplus(o, in, beta, threshold);
}
void clamp(Tensor& o, const Tensor& in, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  o.device().is_cuda() ? cuda::clamp(o, in, lo, hi) : cpu::clamp(o, in, lo, hi);
}
void clamp_tensor(Tensor& o, const Tensor& in, const Tensor& lo, const Tensor& hi) {
  o.device().is_cuda() ? cuda::clamp_tensor(o, in, lo, hi) : cpu::clamp_tensor(o, in, lo, hi);
}
void pow_scalar(Tensor& o, const Tensor& in, const Scalar& e) {
  o.device().is_cuda() ? cuda::pow_scalar(o, in, e) : cpu::pow_scalar(o, in, e);
}
void pow(Tensor& o, const Tensor& base, const Tensor& e) {
  o.device().is_cuda() ? cuda::pow(o, base, e) : cpu::pow(o, base, e);
}
void nan_to_num(Tensor& o, const Tensor& in, double n, double p, double m) {
  o.device().is_cuda() ? cuda::nan_to_num(o, in, n, p, m) : cpu::nan_to_num(o, in, n, p, m);
}
void in_range_mask(Tensor& o, const Tensor& in, std::optional<double> lo, std::optional<double> hi) {
  o.device().is_cuda() ? cuda::in_range_mask(o, in, lo, hi) : cpu::in_range_mask(o, in, lo, hi);
}
void isfinite_mask(Tensor& o, const Tensor& in) {
  o.device().is_cuda() ? cuda::isfinite_mask(o, in) : cpu::isfinite_mask(o, in);
}
void keep_where(Tensor& o, const Tensor& value, const Tensor& keep) {
  o.device().is_cuda() ? cuda::keep_where(o, value, keep) : cpu::keep_where(o, value, keep);
}
void copy(Tensor& dst, const Tensor& src) {
  dst.device().is_cpu() && src.device().is_cpu() ? cpu::copy(dst, src) : cuda::copy(dst, src);
}
}  // namespace kernel

// How an op's result dtype follows its input's.
enum class Rule {
  ToFloat,    // integers and bool become the default float dtype (exp, log, ...)
  Keep,       // the input dtype (neg, abs, floor, relu, ...)
  FloatOnly,  // floating inputs only (gelu, silu, softplus)
};
enum class Save { Nothing, Input, Output };

struct Spec {
  UnaryOp op;
  const char* name;
  const char* node;
  Rule rule;
  bool bool_ok;  // Keep ops that accept bool tensors (and return bool)
  Save save;
  Vjp (*backward)();
};

void check_input(const char* name, const Tensor& x) {
  EMBER_CHECK(x.defined(), ValueError, name, ": got an undefined tensor");
}

DType result_dtype(const Spec& s, DType t) {
  if (s.rule == Rule::ToFloat) return to_float_dtype(t);
  if (s.rule == Rule::FloatOnly) {
    EMBER_CHECK(is_floating(t), Error, s.name, ": expected a floating point tensor, got ", dtype_name(t));
    return t;
  }
  if (t == DType::Bool && !s.bool_ok) {
    EMBER_CHECK(s.op != UnaryOp::Neg, Error,
                "neg: negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                "invert a mask, use the `~` or `logical_not()` operator instead.");
    throw Error(str(s.name, ": not implemented for bool tensors"));
  }
  return t;
}

// Runs kernel(out, in) with x cast to the compute dtype (float32 for the
// half types, unless `gpu_half` says the CUDA kernel computes them in float
// itself) and returns the result, of x's shape, in `dtype`.
template <class Kernel>
Tensor compute(const Tensor& x, DType dtype, Kernel kernel, bool gpu_half = false) {
  autograd::NoGradGuard no_grad;  // the casts are not part of the graph
  const DType work = is_half(dtype) && !(gpu_half && x.device().is_cuda()) ? DType::Float32 : dtype;
  Tensor out = empty_like_operands(x.shape(), work, x.device(), {x});
  kernel(out, x.to(work));
  return work == dtype ? out : out.to(dtype);
}

void record(const Spec& s, const Tensor& x, const Tensor& out) {
  if (!autograd::any_requires_grad({x})) return;
  const TensorList saved = s.save == Save::Input ? TensorList{x} : s.save == Save::Output ? TensorList{out} : TensorList{};
  autograd::record(s.node, {x}, {out}, saved, s.backward());
}

Tensor run(const Spec& s, const Tensor& x) {
  if (autocast::Scope ac{s.name, x}; ac) return run(s, ac[0]);
  check_input(s.name, x);
  if (is_complex(x.dtype())) throw_unsupported_dtype(x.dtype(), s.name, "");
  const DType dt = result_dtype(s, x.dtype());
  Tensor out = compute(x, dt, [&](Tensor& o, const Tensor& in) { kernel::unary(s.op, o, in); }, /*gpu_half=*/true);
  record(s, x, out);
  return out;
}

// ---- the table of plain unary ops
const Spec kNeg{UnaryOp::Neg, "neg", "NegBackward0", Rule::Keep, false, Save::Nothing, functions::neg_backward};
const Spec kAbs{UnaryOp::Abs, "abs", "AbsBackward0", Rule::Keep, true, Save::Input, functions::abs_backward};
const Spec kSign{UnaryOp::Sign, "sign", "SignBackward0", Rule::Keep, true, Save::Nothing, functions::zero_backward};
const Spec kSquare{UnaryOp::Square, "square", "PowBackward0", Rule::Keep, false, Save::Input, functions::square_backward};
const Spec kRelu{UnaryOp::Relu, "relu", "ReluBackward0", Rule::Keep, false, Save::Output, functions::relu_backward};
const Spec kFloor{UnaryOp::Floor, "floor", "FloorBackward0", Rule::Keep, false, Save::Nothing, functions::zero_backward};
const Spec kCeil{UnaryOp::Ceil, "ceil", "CeilBackward0", Rule::Keep, false, Save::Nothing, functions::zero_backward};
const Spec kRound{UnaryOp::Round, "round", "RoundBackward0", Rule::Keep, false, Save::Nothing, functions::zero_backward};
const Spec kExp{UnaryOp::Exp, "exp", "ExpBackward0", Rule::ToFloat, true, Save::Output, functions::exp_backward};
const Spec kLog{UnaryOp::Log, "log", "LogBackward0", Rule::ToFloat, true, Save::Input, functions::log_backward};
const Spec kLog1p{UnaryOp::Log1p, "log1p", "Log1PBackward0", Rule::ToFloat, true, Save::Input, functions::log1p_backward};
const Spec kExpm1{UnaryOp::Expm1, "expm1", "Expm1Backward0", Rule::ToFloat, true, Save::Output, functions::expm1_backward};
const Spec kSqrt{UnaryOp::Sqrt, "sqrt", "SqrtBackward0", Rule::ToFloat, true, Save::Output, functions::sqrt_backward};
const Spec kRsqrt{UnaryOp::Rsqrt, "rsqrt", "RsqrtBackward0", Rule::ToFloat, true, Save::Output, functions::rsqrt_backward};
const Spec kSin{UnaryOp::Sin, "sin", "SinBackward0", Rule::ToFloat, true, Save::Input, functions::sin_backward};
const Spec kCos{UnaryOp::Cos, "cos", "CosBackward0", Rule::ToFloat, true, Save::Input, functions::cos_backward};
const Spec kTanh{UnaryOp::Tanh, "tanh", "TanhBackward0", Rule::ToFloat, true, Save::Output, functions::tanh_backward};
const Spec kSigmoid{UnaryOp::Sigmoid, "sigmoid", "SigmoidBackward0", Rule::ToFloat, true, Save::Output, functions::sigmoid_backward};
const Spec kReciprocal{UnaryOp::Reciprocal, "reciprocal", "ReciprocalBackward0", Rule::ToFloat, true, Save::Output, functions::reciprocal_backward};
const Spec kErf{UnaryOp::Erf, "erf", "ErfBackward0", Rule::ToFloat, true, Save::Input, functions::erf_backward};
const Spec kSilu{UnaryOp::Silu, "silu", "SiluBackward0", Rule::FloatOnly, false, Save::Input, functions::silu_backward};

// ---- in-place plumbing

// PyTorch's can_cast: no floating -> integer, no non-bool -> bool.
void check_castable(const char* name, DType result, DType self) {
  const bool ok = !(is_floating(result) && !is_floating(self)) && !(result != DType::Bool && self == DType::Bool);
  EMBER_CHECK(ok, Error, name, ": result type ", dtype_name(result), " can't be cast to the desired output type ",
              dtype_name(self));
}

void check_writable(const char* name, const Tensor& self) {
  check_input(name, self);
  check_no_internal_overlap(self, name);
}



// Writes an op into self. Without autograd the kernel writes straight into
// self (no temporary: the optimizer's fast path); under autograd the op runs
// out of place through `functional(src)` and self takes over the result's
// history; src is a copy of self when the op's backward saves its input
// (writing self would otherwise invalidate what was saved).
template <class Kernel, class Functional>
Tensor& inplace(Tensor& self, const char* name, DType result, Kernel kernel, Functional functional,
                bool saves_input = true) {
  check_writable(name, self);
  autograd::check_inplace(self, name);
  check_castable(name, result, self.dtype());
  if (!autograd::any_requires_grad({self})) {
    if (self.dtype() == result && !is_half(result)) {
      kernel(self, self);
    } else {
      Tensor r = compute(self, result, kernel);
      kernel::copy(self, r);
    }
    self.bump_version();
    return self;
  }
  return assign_inplace(self, functional(saves_input ? self.clone() : self));
}

// In-place ops with tensor operands: `result` was computed out of place
// (recording history when needed) and is written into self.
Tensor& assign(Tensor& self, const Tensor& result, const char* name) {
  EMBER_CHECK(result.shape() == self.shape(), Error, name, ": output with shape ", self.shape_str(),
              " doesn't match the broadcast shape ", shape_str(result.shape()));
  check_castable(name, result.dtype(), self.dtype());
  if (result.requires_grad()) return assign_inplace(self, result);
  kernel::copy(self, result);
  self.bump_version();
  return self;
}

Tensor& run_inplace(Tensor& self, const Spec& s, const char* name) {
  check_input(name, self);
  const DType dt = result_dtype(s, self.dtype());
  return inplace(self, name, dt, [&](Tensor& o, const Tensor& in) { kernel::unary(s.op, o, in); },
                 [&](const Tensor& src) { return run(s, src); }, s.save == Save::Input);
}

std::optional<double> as_double(const std::optional<Scalar>& s) {
  return s ? std::optional<double>(s->to_double()) : std::nullopt;
}

DType clamp_dtype(const Tensor& x, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  EMBER_CHECK(lo || hi, Error, "clamp: at least one of 'min' or 'max' must not be None");
  DType dt = x.dtype();
  if (lo) dt = promote_with_scalar(dt, *lo);
  if (hi) dt = promote_with_scalar(dt, *hi);
  return dt;
}

DType pow_scalar_dtype(const Tensor& x, const Scalar& e) {
  const DType dt = promote_with_scalar(x.dtype(), e);
  EMBER_CHECK(dt != DType::Bool, Error, "pow: not implemented for bool tensors");
  EMBER_CHECK(is_floating(dt) || e.to_int() >= 0, Error,
              "pow: integers to negative integer powers are not allowed (", dtype_name(dt), " tensor, exponent ",
              e.to_int(), ")");
  return dt;
}

Tensor pow_tensors(const Tensor& base, const Tensor& exponent, const char* node) {
  if (autocast::Scope ac{"pow", base, exponent}; ac) return pow_tensors(ac[0], ac[1], node);
  EMBER_CHECK(base.defined() && exponent.defined(), ValueError, "pow: got an undefined tensor");
  if (complex_ops::any_complex(base, exponent)) return complex_ops::pow(base, exponent);
  const Device dev = common_device("pow", {base, exponent});
  const DType dt = result_type(base, exponent);
  EMBER_CHECK(dt != DType::Bool, Error, "pow: not implemented for bool tensors");
  const Shape shape = broadcast_shapes(base.shape(), exponent.shape(), "pow");
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    const DType work = is_half(dt) ? DType::Float32 : dt;
    out = empty(shape, work, dev);
    kernel::pow(out, base.to(work), exponent.to(work));
    if (work != dt) out = out.to(dt);
  }
  if (autograd::any_requires_grad({base, exponent})) {
    autograd::record(node, {base, exponent}, {out}, {base, exponent, out}, functions::pow_backward());
  }
  return out;
}

// Largest and lowest finite values of a floating dtype.
std::pair<double, double> finite_range(DType t) {
  switch (t) {
    case DType::Float16: return {65504.0, -65504.0};
    case DType::BFloat16: return {3.3895313892515355e38, -3.3895313892515355e38};
    case DType::Float32: return {std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest()};
    default: return {std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest()};
  }
}

}  // namespace

// ---- out of place
Tensor neg(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::neg(x) : run(kNeg, x); }
Tensor abs(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::abs(x) : run(kAbs, x); }
Tensor sign(const Tensor& x) { return run(kSign, x); }
Tensor floor(const Tensor& x) { return run(kFloor, x); }
Tensor ceil(const Tensor& x) { return run(kCeil, x); }
Tensor round(const Tensor& x) { return run(kRound, x); }
Tensor exp(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::exp(x) : run(kExp, x); }
Tensor log(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::log(x) : run(kLog, x); }
Tensor log1p(const Tensor& x) { return run(kLog1p, x); }
Tensor expm1(const Tensor& x) { return run(kExpm1, x); }
Tensor sqrt(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::sqrt(x) : run(kSqrt, x); }
Tensor rsqrt(const Tensor& x) { return run(kRsqrt, x); }
Tensor sin(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::sin(x) : run(kSin, x); }
Tensor cos(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::cos(x) : run(kCos, x); }
Tensor tanh(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::tanh(x) : run(kTanh, x); }
Tensor sigmoid(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::sigmoid(x) : run(kSigmoid, x); }
Tensor reciprocal(const Tensor& x) { return is_complex(x.dtype()) ? complex_ops::reciprocal(x) : run(kReciprocal, x); }
Tensor erf(const Tensor& x) { return run(kErf, x); }
Tensor relu(const Tensor& x) { return run(kRelu, x); }
Tensor silu(const Tensor& x) { return run(kSilu, x); }

Tensor square(const Tensor& x) {
  check_input("square", x);
  if (is_complex(x.dtype())) return complex_ops::square(x);
  // PyTorch squares bools as pow(x, 2): an int64 result.
  return run(kSquare, x.dtype() == DType::Bool ? x.to(DType::Int64) : x);
}

Tensor round(const Tensor& x, int64_t decimals) {
  if (decimals == 0) return round(x);
  check_input("round", x);
  EMBER_CHECK(is_floating(x.dtype()), Error, "round: decimals is only supported for floating point tensors (got ",
              dtype_name(x.dtype()), ")");
  // Scale by 10^|decimals|, round half to even, scale back (PyTorch's order of operations).
  double scale = 1.0;
  for (int64_t i = 0; i < (decimals < 0 ? -decimals : decimals); ++i) scale *= 10.0;
  const Tensor s = scalar_tensor(scale);
  return decimals > 0 ? div(round(mul(x, s)), s) : mul(round(div(x, s)), s);
}

Tensor gelu(const Tensor& x, const std::string& approximate) {
  check_input("gelu", x);
  EMBER_CHECK(approximate == "none" || approximate == "tanh", Error,
              "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
  EMBER_CHECK(is_floating(x.dtype()), Error, "gelu: expected a floating point tensor, got ", dtype_name(x.dtype()));
  const bool use_tanh = approximate == "tanh";
  const UnaryOp op = use_tanh ? UnaryOp::GeluTanh : UnaryOp::GeluErf;
  Tensor out = compute(x, x.dtype(), [&](Tensor& o, const Tensor& in) { kernel::unary(op, o, in); }, true);
  if (autograd::any_requires_grad({x})) {
    autograd::record("GeluBackward0", {x}, {out}, {x}, functions::gelu_backward(use_tanh));
  }
  return out;
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  if (autocast::Scope ac{"softplus", x}; ac) return softplus(ac[0], beta, threshold);
  check_input("softplus", x);
  EMBER_CHECK(is_floating(x.dtype()), Error, "softplus: expected a floating point tensor, got ",
              dtype_name(x.dtype()));
  EMBER_CHECK(beta != 0.0, ValueError, "softplus: beta must not be 0");
  Tensor out = compute(x, x.dtype(), [&](Tensor& o, const Tensor& in) { kernel::softplus(o, in, beta, threshold); });
  if (autograd::any_requires_grad({x})) {
    autograd::record("SoftplusBackward0", {x}, {out}, {x}, functions::softplus_backward(beta, threshold));
  }
  return out;
}

Tensor clamp(const Tensor& x, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  check_input("clamp", x);
  const DType dt = clamp_dtype(x, min, max);
  Tensor out = compute(x, dt, [&](Tensor& o, const Tensor& in) { kernel::clamp(o, in, min, max); });
  if (autograd::any_requires_grad({x})) {
    autograd::record("ClampBackward1", {x}, {out}, {x}, functions::clamp_backward(as_double(min), as_double(max)));
  }
  return out;
}

Tensor clamp(const Tensor& x, const Tensor& min, const Tensor& max) {
  check_input("clamp", x);
  EMBER_CHECK(min.defined() || max.defined(), Error, "clamp: at least one of 'min' or 'max' must not be None");
  const Device dev = common_device("clamp", {x, min, max});
  const DType dt = result_type({x, min, max});
  Shape shape = x.shape();
  if (min.defined()) shape = broadcast_shapes(shape, min.shape(), "clamp");
  if (max.defined()) shape = broadcast_shapes(shape, max.shape(), "clamp");
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    const DType work = is_half(dt) ? DType::Float32 : dt;
    out = empty(shape, work, dev);
    auto cast = [&](const Tensor& t) { return t.defined() ? t.to(work) : t; };
    kernel::clamp_tensor(out, cast(x), cast(min), cast(max));
    if (work != dt) out = out.to(dt);
  }
  if (autograd::any_requires_grad({x, min, max})) {
    autograd::record("ClampBackward0", {x, min, max}, {out}, {x, min, max}, functions::clamp_tensor_backward());
  }
  return out;
}

Tensor pow(const Tensor& base, const Scalar& exponent) {
  if (autocast::Scope ac{"pow", base}; ac) return pow(ac[0], exponent);
  check_input("pow", base);
  if (is_complex(base.dtype())) return complex_ops::pow(base, exponent.to_double());
  const DType dt = pow_scalar_dtype(base, exponent);
  Tensor out = compute(base, dt, [&](Tensor& o, const Tensor& in) { kernel::pow_scalar(o, in, exponent); });
  if (autograd::any_requires_grad({base})) {
    autograd::record("PowBackward0", {base}, {out}, {base}, functions::pow_scalar_backward(exponent));
  }
  return out;
}

Tensor pow(const Tensor& base, const Tensor& exponent) { return pow_tensors(base, exponent, "PowBackward1"); }

Tensor pow(const Scalar& base, const Tensor& exponent) {
  return pow_tensors(scalar_tensor(base, exponent.device()), exponent, "PowBackward2");
}

Tensor nan_to_num(const Tensor& x, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  check_input("nan_to_num", x);
  if (!is_floating(x.dtype())) return x.clone();  // integers have no NaN or inf
  const auto [hi, lo] = finite_range(x.dtype());
  const double n = nan.value_or(0.0), p = posinf.value_or(hi), m = neginf.value_or(lo);
  Tensor out = compute(x, x.dtype(), [&](Tensor& o, const Tensor& in) { kernel::nan_to_num(o, in, n, p, m); });
  if (autograd::any_requires_grad({x})) {
    autograd::record("NanToNumBackward0", {x}, {out}, {x}, functions::nan_to_num_backward());
  }
  return out;
}

// ---- backward helpers
Tensor in_range_mask(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  check_input("in_range_mask", x);
  return compute(x, to_float_dtype(x.dtype()), [&](Tensor& o, const Tensor& in) { kernel::in_range_mask(o, in, lo, hi); });
}

Tensor isfinite_mask(const Tensor& x) {
  check_input("isfinite_mask", x);
  return compute(x, to_float_dtype(x.dtype()), [&](Tensor& o, const Tensor& in) { kernel::isfinite_mask(o, in); });
}

Tensor keep_where(const Tensor& value, const Tensor& keep) {
  check_input("keep_where", value);
  check_input("keep_where", keep);
  const DType dt = value.dtype();
  const Shape shape = broadcast_shapes(value.shape(), keep.shape(), "keep_where");
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    const DType work = is_half(dt) ? DType::Float32 : dt;
    out = empty(shape, work, value.device());
    kernel::keep_where(out, value.to(work), keep.to(work));
    if (work != dt) out = out.to(dt);
  }
  if (autograd::any_requires_grad({value})) {
    autograd::record("KeepWhereBackward0", {value, keep}, {out}, {keep}, functions::keep_where_backward());
  }
  return out;
}

// ---- Tensor methods
Tensor Tensor::neg() const { return ember::neg(*this); }
Tensor Tensor::abs() const { return ember::abs(*this); }
Tensor Tensor::exp() const { return ember::exp(*this); }
Tensor Tensor::log() const { return ember::log(*this); }
Tensor Tensor::log1p() const { return ember::log1p(*this); }
Tensor Tensor::expm1() const { return ember::expm1(*this); }
Tensor Tensor::sqrt() const { return ember::sqrt(*this); }
Tensor Tensor::rsqrt() const { return ember::rsqrt(*this); }
Tensor Tensor::sin() const { return ember::sin(*this); }
Tensor Tensor::cos() const { return ember::cos(*this); }
Tensor Tensor::tanh() const { return ember::tanh(*this); }
Tensor Tensor::sigmoid() const { return ember::sigmoid(*this); }
Tensor Tensor::relu() const { return ember::relu(*this); }
Tensor Tensor::silu() const { return ember::silu(*this); }
Tensor Tensor::sign() const { return ember::sign(*this); }
Tensor Tensor::floor() const { return ember::floor(*this); }
Tensor Tensor::ceil() const { return ember::ceil(*this); }
Tensor Tensor::round() const { return ember::round(*this); }
Tensor Tensor::round(int64_t decimals) const { return ember::round(*this, decimals); }
Tensor Tensor::reciprocal() const { return ember::reciprocal(*this); }
Tensor Tensor::square() const { return ember::square(*this); }
Tensor Tensor::erf() const { return ember::erf(*this); }
Tensor Tensor::gelu(const std::string& approximate) const { return ember::gelu(*this, approximate); }
Tensor Tensor::softplus(double beta, double threshold) const { return ember::softplus(*this, beta, threshold); }
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const { return ember::clamp(*this, min, max); }
Tensor Tensor::clamp(const Tensor& min, const Tensor& max) const { return ember::clamp(*this, min, max); }
Tensor Tensor::pow(const Scalar& exponent) const { return ember::pow(*this, exponent); }
Tensor Tensor::pow(const Tensor& exponent) const { return ember::pow(*this, exponent); }
Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) const {
  return ember::nan_to_num(*this, nan, posinf, neginf);
}

Tensor& Tensor::neg_() { return run_inplace(*this, kNeg, "neg_"); }
Tensor& Tensor::abs_() { return run_inplace(*this, kAbs, "abs_"); }
Tensor& Tensor::exp_() { return run_inplace(*this, kExp, "exp_"); }
Tensor& Tensor::log_() { return run_inplace(*this, kLog, "log_"); }
Tensor& Tensor::log1p_() { return run_inplace(*this, kLog1p, "log1p_"); }
Tensor& Tensor::expm1_() { return run_inplace(*this, kExpm1, "expm1_"); }
Tensor& Tensor::sqrt_() { return run_inplace(*this, kSqrt, "sqrt_"); }
Tensor& Tensor::rsqrt_() { return run_inplace(*this, kRsqrt, "rsqrt_"); }
Tensor& Tensor::sin_() { return run_inplace(*this, kSin, "sin_"); }
Tensor& Tensor::cos_() { return run_inplace(*this, kCos, "cos_"); }
Tensor& Tensor::sigmoid_() { return run_inplace(*this, kSigmoid, "sigmoid_"); }
Tensor& Tensor::tanh_() { return run_inplace(*this, kTanh, "tanh_"); }
Tensor& Tensor::relu_() { return run_inplace(*this, kRelu, "relu_"); }
Tensor& Tensor::silu_() { return run_inplace(*this, kSilu, "silu_"); }
Tensor& Tensor::sign_() { return run_inplace(*this, kSign, "sign_"); }
Tensor& Tensor::floor_() { return run_inplace(*this, kFloor, "floor_"); }
Tensor& Tensor::ceil_() { return run_inplace(*this, kCeil, "ceil_"); }
Tensor& Tensor::round_() { return run_inplace(*this, kRound, "round_"); }
Tensor& Tensor::reciprocal_() { return run_inplace(*this, kReciprocal, "reciprocal_"); }
Tensor& Tensor::erf_() { return run_inplace(*this, kErf, "erf_"); }

Tensor& Tensor::square_() {
  check_input("square_", *this);
  EMBER_CHECK(dtype() != DType::Bool, Error, "square_: result type int64 can't be cast to the desired output type bool");
  return run_inplace(*this, kSquare, "square_");
}

Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  check_input("clamp_", *this);
  const DType dt = clamp_dtype(*this, min, max);
  return inplace(*this, "clamp_", dt, [&](Tensor& o, const Tensor& in) { kernel::clamp(o, in, min, max); },
                 [&](const Tensor& src) { return ember::clamp(src, min, max); });
}

Tensor& Tensor::pow_(const Scalar& exponent) {
  check_input("pow_", *this);
  const DType dt = pow_scalar_dtype(*this, exponent);
  return inplace(*this, "pow_", dt, [&](Tensor& o, const Tensor& in) { kernel::pow_scalar(o, in, exponent); },
                 [&](const Tensor& src) { return ember::pow(src, exponent); });
}

Tensor& Tensor::pow_(const Tensor& exponent) {
  check_writable("pow_", *this);
  autograd::check_inplace(*this, "pow_");
  const Tensor src = autograd::any_requires_grad({*this, exponent}) ? clone() : *this;  // pow saves its base
  return assign(*this, ember::pow(src, exponent), "pow_");
}

Tensor& Tensor::clamp_(const Tensor& min, const Tensor& max) {
  check_writable("clamp_", *this);
  autograd::check_inplace(*this, "clamp_");
  const Tensor src = autograd::any_requires_grad({*this, min, max}) ? clone() : *this;  // clamp saves x
  return assign(*this, ember::clamp(src, min, max), "clamp_");
}

Tensor& Tensor::nan_to_num_(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  check_input("nan_to_num_", *this);
  if (!is_floating(dtype())) {
    check_writable("nan_to_num_", *this);
    autograd::check_inplace(*this, "nan_to_num_");
    return *this;  // integers have nothing to replace
  }
  const auto [hi, lo] = finite_range(dtype());
  const double n = nan.value_or(0.0), p = posinf.value_or(hi), m = neginf.value_or(lo);
  return inplace(*this, "nan_to_num_", dtype(), [&](Tensor& o, const Tensor& in) { kernel::nan_to_num(o, in, n, p, m); },
                 [&](const Tensor& src) { return ember::nan_to_num(src, nan, posinf, neginf); });
}

}  // namespace ember
