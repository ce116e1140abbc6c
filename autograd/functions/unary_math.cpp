#include <ember/autograd/functions/unary_math.h>

#include <cmath>

#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/unary.h>
#include <ember/core/ops/unary_math.h>

namespace ember::autograd::functions {

namespace {

Tensor num(double v) { return scalar_tensor(v); }
Tensor one_minus_square(const Tensor& x) { return sub(num(1.0), mul(x, x)); }

constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kSqrtPiOverTwo = 0.88622692545275801365;

// The gradient of one formula: g and the saved tensor (input or output).
Tensor unary_grad(MathOp op, const Tensor& g, const Tensor& s) {
  switch (op) {
    case MathOp::Log2: return div(g, mul(s, num(kLn2)));
    case MathOp::Log10: return div(g, mul(s, num(kLn10)));
    case MathOp::Exp2: return mul(g, mul(s, num(kLn2)));  // s = output
    case MathOp::Sinh: return mul(g, cosh(s));
    case MathOp::Cosh: return mul(g, sinh(s));
    case MathOp::Tan: return mul(g, add(num(1.0), mul(s, s)));  // s = output
    case MathOp::Asin: return mul(g, rsqrt(one_minus_square(s)));
    case MathOp::Acos: return neg(mul(g, rsqrt(one_minus_square(s))));
    case MathOp::Atan: return div(g, add(num(1.0), mul(s, s)));
    case MathOp::Asinh: return mul(g, rsqrt(add(mul(s, s), num(1.0))));
    case MathOp::Acosh: return mul(g, rsqrt(mul(sub(s, num(1.0)), add(s, num(1.0)))));
    case MathOp::Atanh: return div(g, one_minus_square(s));
    case MathOp::Trunc: return zeros_like(g);
    case MathOp::Frac: return g;
    case MathOp::Erfc: return mul(g, mul(exp(neg(mul(s, s))), num(-kTwoOverSqrtPi)));
    case MathOp::Lgamma: return mul(g, digamma(s));
    case MathOp::Digamma: return mul(g, trigamma(s));
    case MathOp::Erfinv: return mul(g, mul(exp(mul(s, s)), num(kSqrtPiOverTwo)));  // s = output
    case MathOp::Trigamma:
      throw NotImplementedError("trigamma: the derivative of trigamma (polygamma(2, x)) is not implemented");
  }
  throw Error("unary_math: unknown op");
}

}  // namespace

bool unary_math_saves_output(MathOp op) { return op == MathOp::Exp2 || op == MathOp::Tan || op == MathOp::Erfinv; }

Vjp unary_math_backward(MathOp op) {
  return [op](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    return TensorList{unary_grad(op, g[0], s[0])};
  };
}

Vjp binary_math_backward(MathOp2 op) {
  return [op](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor& a = s[0];
    const Tensor& b = s[1];
    const Tensor& out = s[2];
    Tensor ga, gb;
    switch (op) {
      case MathOp2::Atan2: {
        const Tensor denom = add(mul(a, a), mul(b, b));
        if (need[0]) ga = mul(g[0], div(b, denom));
        if (need[1]) gb = mul(g[0], div(neg(a), denom));
        break;
      }
      case MathOp2::Hypot:
        if (need[0]) ga = mul(g[0], div(a, out));
        if (need[1]) gb = mul(g[0], div(b, out));
        break;
      case MathOp2::Fmod:
        if (need[0]) ga = g[0];
        if (need[1]) gb = mul(neg(g[0]), div(a, b, std::string("trunc")));
        break;
      case MathOp2::Copysign:
        // out / a is the sign flip (1 or -1); 0 where a is 0.
        if (need[0]) ga = mul(g[0], where(eq(a, num(0.0)), num(0.0), div(out, a)));
        if (need[1]) gb = zeros_like(g[0]);
        break;
      case MathOp2::LogAddExp:
        if (need[0]) ga = div(g[0], add(num(1.0), exp(sub(b, a))));
        if (need[1]) gb = div(g[0], add(num(1.0), exp(sub(a, b))));
        break;
      case MathOp2::LogAddExp2:
        if (need[0]) ga = div(g[0], add(num(1.0), exp2(sub(b, a))));
        if (need[1]) gb = div(g[0], add(num(1.0), exp2(sub(a, b))));
        break;
      case MathOp2::Xlogy:
        if (need[0]) ga = mul(g[0], xlogy(ne(a, num(0.0)).to(a.dtype()), b));
        if (need[1]) gb = mul(g[0], div(a, b));
        break;
      case MathOp2::GeluBackward:
      case MathOp2::GeluTanhBackward:
      case MathOp2::SiluBackward:
      case MathOp2::TanhBackward:
      case MathOp2::SigmoidBackward:
        throw Error("binary_math: the fused activation gradients are not recorded by autograd (internal error)");
    }
    return TensorList{ga, gb};
  };
}

}  // namespace ember::autograd::functions
