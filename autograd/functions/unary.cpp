#include <ember/autograd/functions/unary.h>

#include <cmath>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/unary.h>
#include <ember/core/ops/unary_math.h>

namespace ember::autograd::functions {

namespace {

// A Python-number-like constant: it never changes the dtype of what it meets.
Tensor num(double v) { return scalar_tensor(v); }
Tensor one_minus(const Tensor& t) { return sub(num(1.0), t); }

// 0/1 masks of comparisons with zero; NaN compares false everywhere.
Tensor ge0(const Tensor& d) { return in_range_mask(d, 0.0, std::nullopt); }
Tensor le0(const Tensor& d) { return in_range_mask(d, std::nullopt, 0.0); }
Tensor not_nan(const Tensor& d) { return in_range_mask(d, std::nullopt, std::nullopt); }
Tensor lt0(const Tensor& d) { return sub(not_nan(d), ge0(d)); }
Tensor gt0(const Tensor& d) { return sub(not_nan(d), le0(d)); }
Tensor either(const Tensor& a, const Tensor& b) { return sub(add(a, b), mul(a, b)); }

using Fn = std::function<Tensor(const Tensor& g, const Tensor& saved)>;

// The common shape: one input, one saved tensor, one formula.
Vjp one_input(Fn f) {
  return [f = std::move(f)](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    return TensorList{f(g[0], s.empty() ? Tensor() : s[0])};
  };
}

}  // namespace

Vjp neg_backward() {
  return one_input([](const Tensor& g, const Tensor&) { return neg(g); });
}

Vjp abs_backward() {
  return one_input([](const Tensor& g, const Tensor& x) { return mul(g, sign(x)); });
}

Vjp square_backward() {
  return one_input([](const Tensor& g, const Tensor& x) { return mul(g, mul(x, num(2.0))); });
}

Vjp exp_backward() {
  return one_input([](const Tensor& g, const Tensor& out) { return mul(g, out); });
}

Vjp log_backward() {
  return one_input([](const Tensor& g, const Tensor& x) { return div(g, x); });
}

Vjp log1p_backward() {
  return one_input([](const Tensor& g, const Tensor& x) { return div(g, add(x, num(1.0))); });
}

Vjp expm1_backward() {
  return one_input([](const Tensor& g, const Tensor& out) { return mul(g, add(out, num(1.0))); });
}

Vjp sqrt_backward() {
  return one_input([](const Tensor& g, const Tensor& out) { return div(g, mul(out, num(2.0))); });
}

Vjp rsqrt_backward() {
  // d(x^-1/2) = -1/2 x^-3/2 = -1/2 out^3
  return one_input([](const Tensor& g, const Tensor& out) { return mul(g, mul(pow(out, 3), num(-0.5))); });
}

Vjp sin_backward() {
  return one_input([](const Tensor& g, const Tensor& x) { return mul(g, cos(x)); });
}

Vjp cos_backward() {
  return one_input([](const Tensor& g, const Tensor& x) { return neg(mul(g, sin(x))); });
}

namespace {
// Whether a gradient formula must be built from ember ops (create_graph: its
// own graph is needed) rather than one fused kernel.
bool graph_needed(const Tensor& g, const Tensor& x) { return any_requires_grad({g, x}); }
}  // namespace

Vjp tanh_backward() {
  return one_input([](const Tensor& g, const Tensor& out) {
    if (!graph_needed(g, out) && !is_complex(out.dtype())) return ember::tanh_backward(g, out);
    return mul(g, one_minus(mul(out, out)));
  });
}

Vjp sigmoid_backward() {
  return one_input([](const Tensor& g, const Tensor& out) {
    if (!graph_needed(g, out) && !is_complex(out.dtype())) return ember::sigmoid_backward(g, out);
    return mul(g, mul(out, one_minus(out)));
  });
}

Vjp reciprocal_backward() {
  return one_input([](const Tensor& g, const Tensor& out) { return neg(mul(g, mul(out, out))); });
}

Vjp erf_backward() {
  const double two_over_sqrt_pi = 2.0 / std::sqrt(M_PI);
  return one_input([two_over_sqrt_pi](const Tensor& g, const Tensor& x) {
    return mul(g, mul(exp(neg(mul(x, x))), num(two_over_sqrt_pi)));
  });
}

Vjp relu_backward() {
  // PyTorch's threshold_backward: zero where out <= 0, g elsewhere (NaN too).
  // out >= 0 or NaN, so "out != 0" is that test: one pass, no mask tensor.
  return one_input([](const Tensor& g, const Tensor& out) { return keep_where(g, out); });
}

Vjp gelu_backward(bool tanh_approximation) {
  if (!tanh_approximation) {
    // d/dx x*Phi(x) = Phi(x) + x*phi(x)
    const double inv_sqrt2 = 1.0 / std::sqrt(2.0), inv_sqrt_2pi = 1.0 / std::sqrt(2.0 * M_PI);
    return one_input([=](const Tensor& g, const Tensor& x) {
      if (!graph_needed(g, x)) return ember::gelu_backward(g, x, "none");
      Tensor cdf = mul(add(erf(mul(x, num(inv_sqrt2))), num(1.0)), num(0.5));
      Tensor pdf = mul(exp(mul(mul(x, x), num(-0.5))), num(inv_sqrt_2pi));
      return mul(g, add(cdf, mul(x, pdf)));
    });
  }
  // y = x/2 (1 + tanh(u)), u = k (x + c x^3):
  // dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3c x^2)
  const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
  return one_input([=](const Tensor& g, const Tensor& x) {
    if (!graph_needed(g, x)) return ember::gelu_backward(g, x, "tanh");
    Tensor x2 = mul(x, x);
    Tensor t = tanh(mul(add(x, mul(mul(x2, x), num(c))), num(k)));
    Tensor du = mul(add(mul(x2, num(3.0 * c)), num(1.0)), num(k));
    Tensor left = mul(add(t, num(1.0)), num(0.5));
    Tensor right = mul(mul(mul(x, num(0.5)), one_minus(mul(t, t))), du);
    return mul(g, add(left, right));
  });
}

Vjp silu_backward() {
  // d/dx x s(x) = s (1 + x (1 - s))
  return one_input([](const Tensor& g, const Tensor& x) {
    if (!graph_needed(g, x)) return ember::silu_backward(g, x);
    Tensor s = sigmoid(x);
    return mul(g, mul(s, add(mul(x, one_minus(s)), num(1.0))));
  });
}

Vjp softplus_backward(double beta, double threshold) {
  // sigmoid(beta x) below the threshold, 1 above it (where the forward is x).
  return one_input([=](const Tensor& g, const Tensor& x) {
    Tensor z = mul(x, num(beta));
    Tensor below = le0(sub(z, num(threshold)));
    return mul(g, add(mul(below, sigmoid(z)), one_minus(below)));
  });
}

Vjp clamp_backward(std::optional<double> lo, std::optional<double> hi) {
  // Gradient flows where lo <= x <= hi (bounds included, NaN excluded).
  return one_input([=](const Tensor& g, const Tensor& x) { return keep_where(g, in_range_mask(x, lo, hi)); });
}

Vjp clamp_tensor_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor& x = s[0];
    const Tensor& lo = s[1];
    const Tensor& hi = s[2];
    TensorList out(3);
    if (lo.defined() && hi.defined()) {
      // PyTorch: x where lo <= x <= hi; lo where x < lo < hi; hi where x > hi or hi < lo.
      if (need[0]) out[0] = keep_where(g[0], mul(ge0(sub(x, lo)), le0(sub(x, hi))));
      if (need[1]) out[1] = keep_where(g[0], mul(lt0(sub(x, lo)), lt0(sub(lo, hi))));
      if (need[2]) out[2] = keep_where(g[0], either(gt0(sub(x, hi)), lt0(sub(hi, lo))));
    } else if (lo.defined()) {
      if (need[0]) out[0] = keep_where(g[0], ge0(sub(x, lo)));
      if (need[1]) out[1] = keep_where(g[0], lt0(sub(x, lo)));
    } else {
      if (need[0]) out[0] = keep_where(g[0], le0(sub(x, hi)));
      if (need[2]) out[2] = keep_where(g[0], gt0(sub(x, hi)));
    }
    return out;
  };
}

Vjp pow_scalar_backward(const Scalar& exponent) {
  // e x^(e-1); exactly zero for e == 0 (even at x == 0).
  return one_input([exponent](const Tensor& g, const Tensor& x) {
    if (exponent.to_double() == 0.0) return zeros_like(g);
    const Scalar e_minus_1 = exponent.is_floating() ? Scalar(exponent.to_double() - 1.0)
                                                    : Scalar(exponent.to_int() - 1);
    return mul(g, mul(pow(x, e_minus_1), scalar_tensor(exponent)));
  });
}

Vjp pow_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor& out = s[2];
    // Work in the result's dtype (the base may be an integer Python number).
    const Tensor x = s[0].dtype() == out.dtype() ? s[0] : s[0].to(out.dtype());
    const Tensor e = s[1].dtype() == out.dtype() ? s[1] : s[1].to(out.dtype());
    TensorList grads(2);
    if (need[0]) {
      // e x^(e-1), zero where e == 0 (0 * inf at x == 0 would give NaN).
      Tensor d = mul(e, pow(x, sub(e, num(1.0))));
      grads[0] = keep_where(mul(g[0], d), one_minus(in_range_mask(e, 0.0, 0.0)));
    }
    if (need[1]) {
      // x^e log(x), zero where x == 0 and e >= 0 (PyTorch's convention).
      Tensor skip = mul(in_range_mask(x, 0.0, 0.0), ge0(e));
      grads[1] = keep_where(mul(g[0], mul(out, log(x))), one_minus(skip));
    }
    return grads;
  };
}

Vjp nan_to_num_backward() {
  return one_input([](const Tensor& g, const Tensor& x) { return keep_where(g, isfinite_mask(x)); });
}

Vjp keep_where_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    return TensorList{keep_where(g[0], s[0]), Tensor()};
  };
}

}  // namespace ember::autograd::functions
