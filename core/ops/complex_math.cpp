// Arithmetic on complex tensors, written with real ops on the parts (see
// complex.h): each op splits its operands into (real, imaginary) float
// tensors, computes the parts of the result and puts them back together.
// On the CPU, + - * / of complex operands run as one loop over std::complex
// elements instead (complex_cpu_arith.cpp): the parts' strided views cost
// several passes where one suffices.
#include <ember/core/ops/complex.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/unary.h>
#include <ember/core/ops/unary_math.h>
#include <ember/core/shape.h>
#include <ember/core/type_promotion.h>

namespace ember::complex_ops {

namespace {

// An operand as parts of dtype `part`; `im` stays undefined for a real operand,
// so that mixed real/complex ops skip the products with a zero part.
struct Parts {
  Tensor re, im;
};

Parts parts_of(const Tensor& t, DType part) {
  if (is_complex(t.dtype())) {
    const DType want = complex_dtype_for(part);
    const Tensor z = t.dtype() == want ? t : t.to(want);
    return {ember::real(z), ember::imag(z)};
  }
  return {t.dtype() == part ? t : t.to(part), Tensor()};
}

DType part_dtype_of(const Tensor& a, const Tensor& b) { return complex_part_dtype(result_type(a, b)); }

Tensor zeros_for(const Tensor& like) { return zeros({}, like.dtype(), like.device()); }

// Puts parts back together; a missing imaginary part is zero.
Tensor join(const Tensor& re, const Tensor& im) {
  return ember::complex(re, im.defined() ? im : zeros_for(re));
}

// x + y where either may be missing (a zero part).
Tensor plus(const Tensor& x, const Tensor& y) {
  if (!x.defined()) return y;
  if (!y.defined()) return x;
  return ember::add(x, y);
}

Tensor times(const Tensor& x, const Tensor& y) {
  return x.defined() && y.defined() ? ember::mul(x, y) : Tensor();
}

Tensor negated(const Tensor& x) { return x.defined() ? ember::neg(x) : x; }

void check_float_parts(const char* op, DType part) {
  EMBER_CHECK(part == DType::Float32 || part == DType::Float64, NotImplementedError, op,
              ": complex arithmetic in ", dtype_name(part), " parts is not supported");
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, double alpha) {
  if (cpu_arith_applies(a, b)) return cpu_arith(CpuArith::Add, a, b, alpha);
  const DType part = part_dtype_of(a, b);
  check_float_parts("add", part);
  const Parts x = parts_of(a, part), y = parts_of(b, part);
  const Scalar s(alpha);
  const Tensor im = !y.im.defined() ? x.im : !x.im.defined() ? ember::mul(y.im, full({}, alpha, part, y.im.device()))
                                                              : ember::add(x.im, y.im, s);
  return join(ember::add(x.re, y.re, s), im);
}

Tensor sub(const Tensor& a, const Tensor& b, double alpha) { return add(a, b, -alpha); }

Tensor mul(const Tensor& a, const Tensor& b) {
  if (cpu_arith_applies(a, b)) return cpu_arith(CpuArith::Mul, a, b, 1.0);
  const DType part = part_dtype_of(a, b);
  check_float_parts("mul", part);
  const Parts x = parts_of(a, part), y = parts_of(b, part);
  Tensor re = ember::mul(x.re, y.re);
  if (x.im.defined() && y.im.defined()) re = ember::sub(re, ember::mul(x.im, y.im));
  const Tensor im = plus(times(x.re, y.im), times(x.im, y.re));
  return join(re, im);
}

Tensor div(const Tensor& a, const Tensor& b) {
  if (cpu_arith_applies(a, b)) return cpu_arith(CpuArith::Div, a, b, 1.0);
  const DType part = part_dtype_of(a, b);
  check_float_parts("div", part);
  const Parts x = parts_of(a, part), y = parts_of(b, part);
  if (!y.im.defined()) return join(ember::div(x.re, y.re), x.im.defined() ? ember::div(x.im, y.re) : Tensor());
  // (xr + i xi) / (yr + i yi) = ((xr yr + xi yi) + i (xi yr - xr yi)) / (yr^2 + yi^2)
  const Tensor denom = ember::add(ember::mul(y.re, y.re), ember::mul(y.im, y.im));
  const Tensor re = plus(ember::mul(x.re, y.re), times(x.im, y.im));
  const Tensor im = plus(times(x.im, y.re), negated(ember::mul(x.re, y.im)));
  return join(ember::div(re, denom), ember::div(im, denom));
}

Tensor eq(const Tensor& a, const Tensor& b) {
  const DType part = part_dtype_of(a, b);
  const Parts x = parts_of(a, part), y = parts_of(b, part);
  const Tensor xi = x.im.defined() ? x.im : zeros_for(x.re), yi = y.im.defined() ? y.im : zeros_for(y.re);
  return logical_and(ember::eq(x.re, y.re), ember::eq(xi, yi));
}

Tensor ne(const Tensor& a, const Tensor& b) { return logical_not(complex_ops::eq(a, b)); }

Tensor neg(const Tensor& z) { return join(ember::neg(ember::real(z)), ember::neg(ember::imag(z))); }

namespace {
// num / den where den (real) is non-zero, 0 where it is zero: the value |z|'s
// gradient and sgn take at z = 0. The divisor is made safe first so that no
// NaN reaches the gradient through the unused branch.
Tensor over_nonzero(const Tensor& num, const Tensor& den) {
  const Tensor nonzero = ember::ne(den, zeros_for(den));
  const Tensor safe = where(nonzero, den, ones({}, den.dtype(), den.device()));
  return where(nonzero, ember::div(num, safe), zeros_for(den));
}
}  // namespace

Tensor abs(const Tensor& z) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = hypot(ember::real(z), ember::imag(z));  // no overflow for large parts
  }
  if (autograd::any_requires_grad({z})) {
    // d|z| gives g * z / |z| in PyTorch's convention, and 0 at z = 0.
    autograd::record("AbsBackward0", {z}, {out}, {z, out},
                     [](const autograd::TensorList& g, const autograd::TensorList& s, const std::vector<bool>&) {
                       return autograd::TensorList{complex_ops::mul(s[0], over_nonzero(g[0], s[1]))};
                     });
  }
  return out;
}

Tensor sgn(const Tensor& z) { return over_nonzero(z, complex_ops::abs(z)); }

Tensor exp(const Tensor& z) {
  const Tensor e = ember::exp(ember::real(z)), im = ember::imag(z);
  return join(ember::mul(e, ember::cos(im)), ember::mul(e, ember::sin(im)));
}

Tensor log(const Tensor& z) { return join(ember::log(complex_ops::abs(z)), ember::angle(z)); }

Tensor sqrt(const Tensor& z) {
  const Tensor half = full({}, 0.5, complex_part_dtype(z.dtype()), z.device());
  return polar(ember::sqrt(complex_ops::abs(z)), ember::mul(ember::angle(z), half));
}

Tensor reciprocal(const Tensor& z) {
  const Tensor re = ember::real(z), im = ember::imag(z);
  const Tensor denom = ember::add(ember::mul(re, re), ember::mul(im, im));
  return join(ember::div(re, denom), ember::neg(ember::div(im, denom)));
}

Tensor square(const Tensor& z) { return complex_ops::mul(z, z); }

// The circular and hyperbolic functions from their real-part formulas, e.g.
// sin(x + iy) = sin x cosh y + i cos x sinh y.
Tensor sin(const Tensor& z) {
  const Tensor x = ember::real(z), y = ember::imag(z);
  return join(ember::mul(ember::sin(x), ember::cosh(y)), ember::mul(ember::cos(x), ember::sinh(y)));
}

Tensor cos(const Tensor& z) {
  const Tensor x = ember::real(z), y = ember::imag(z);
  return join(ember::mul(ember::cos(x), ember::cosh(y)), ember::neg(ember::mul(ember::sin(x), ember::sinh(y))));
}

Tensor sinh(const Tensor& z) {
  const Tensor x = ember::real(z), y = ember::imag(z);
  return join(ember::mul(ember::sinh(x), ember::cos(y)), ember::mul(ember::cosh(x), ember::sin(y)));
}

Tensor cosh(const Tensor& z) {
  const Tensor x = ember::real(z), y = ember::imag(z);
  return join(ember::mul(ember::cosh(x), ember::cos(y)), ember::mul(ember::sinh(x), ember::sin(y)));
}

namespace {
// (sin 2a + i sinh 2b) / (cos 2a + cosh 2b), the parts of tan(a + ib). b is
// clamped to +-20 first: beyond that the value is +-i to double precision,
// and sinh / cosh would overflow to inf / inf.
Tensor tan_of_parts(const Tensor& a, const Tensor& b) {
  const Tensor two = full({}, 2.0, a.dtype(), a.device());
  const Tensor a2 = ember::mul(a, two), b2 = ember::mul(clamp(b, Scalar(-20.0), Scalar(20.0)), two);
  const Tensor denom = ember::add(ember::cos(a2), ember::cosh(b2));
  return join(ember::div(ember::sin(a2), denom), ember::div(ember::sinh(b2), denom));
}
}  // namespace

Tensor tan(const Tensor& z) { return tan_of_parts(ember::real(z), ember::imag(z)); }

// tanh(z) = -i tan(iz), with iz = -y + ix.
Tensor tanh(const Tensor& z) {
  const Tensor t = tan_of_parts(ember::neg(ember::imag(z)), ember::real(z));
  return join(ember::imag(t), ember::neg(ember::real(t)));
}

Tensor sigmoid(const Tensor& z) {
  const Tensor one = ones({}, z.dtype(), z.device());
  return complex_ops::reciprocal(complex_ops::add(one, complex_ops::exp(complex_ops::neg(z)), 1.0));
}

Tensor pow(const Tensor& z, double exponent) {
  if (exponent == 1.0) return z.clone();
  if (exponent == 2.0) return complex_ops::mul(z, z);
  if (exponent == 0.5) return complex_ops::sqrt(z);
  if (exponent == -1.0) return complex_ops::reciprocal(z);
  const DType part = complex_part_dtype(z.dtype());
  const Tensor p = full({}, exponent, part, z.device());
  return polar(ember::pow(complex_ops::abs(z), p), ember::mul(ember::angle(z), p));
}

Tensor pow(const Tensor& z, const Tensor& exponent) {
  const Tensor base = is_complex(z.dtype()) ? z : z.to(complex_dtype_for(part_dtype_of(z, exponent)));
  return complex_ops::exp(complex_ops::mul(exponent, complex_ops::log(base)));
}

namespace {
// dims of z as a sorted list of wrapped dims; empty means every dim.
std::vector<int64_t> wrapped_dims(const Tensor& z, const std::vector<int64_t>& dims, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < z.dim(); ++d) out.push_back(d);
  } else {
    for (int64_t d : dims) out.push_back(wrap_dim(d, std::max<int64_t>(z.dim(), 1), op));
  }
  return out;
}
}  // namespace

Tensor sum(const Tensor& z, const std::vector<int64_t>& dims, bool keepdim) {
  if (z.dim() == 0) return z.clone();
  const Tensor parts = ember::sum(view_as_real(z), wrapped_dims(z, dims, "sum"), keepdim);
  return view_as_complex(parts.contiguous());
}

Tensor mean(const Tensor& z, const std::vector<int64_t>& dims, bool keepdim) {
  if (z.dim() == 0) return z.clone();
  const Tensor parts = ember::mean(view_as_real(z), wrapped_dims(z, dims, "mean"), keepdim);
  return view_as_complex(parts.contiguous());
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  const DType part = part_dtype_of(a, b);
  check_float_parts("matmul", part);
  const Parts x = parts_of(a, part), y = parts_of(b, part);
  Tensor re = ember::matmul(x.re, y.re);
  if (x.im.defined() && y.im.defined()) re = ember::sub(re, ember::matmul(x.im, y.im));
  Tensor im;
  if (y.im.defined()) im = ember::matmul(x.re, y.im);
  if (x.im.defined()) im = plus(im, ember::matmul(x.im, y.re));
  return join(re, im);
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  const DType dtype = result_type(tensors);
  std::vector<Tensor> parts;
  int64_t nd = -1;
  for (const Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0) continue;  // legacy empty tensors, skipped as by cat
    EMBER_CHECK(t.dim() > 0, Error, "cat: zero-dimensional tensor cannot be concatenated");
    if (nd < 0) nd = t.dim();
    parts.push_back(view_as_real(t.dtype() == dtype ? t : t.to(dtype)));
  }
  if (parts.empty()) return empty({0}, dtype, tensors[0].device());
  return view_as_complex(ember::cat(parts, wrap_dim(dim, nd, "cat")).contiguous());
}

}  // namespace ember::complex_ops
