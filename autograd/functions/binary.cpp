#include <ember/autograd/functions/binary.h>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/unary.h>
#include <ember/core/ops/factory.h>

namespace ember::autograd::functions {

namespace {
Tensor zero() { return scalar_tensor(0.0); }

// maximum / minimum: the gradient goes to the input that was picked; a tie
// splits it evenly, as PyTorch does.
TensorList pick_backward(const Tensor& g, const Tensor& a, const Tensor& b, bool max,
                         const std::vector<bool>& need) {
  const Tensor shared = where(eq(a, b), mul(g, scalar_tensor(0.5)), g);
  const Tensor a_lost = max ? lt(a, b) : gt(a, b);
  const Tensor b_lost = max ? gt(a, b) : lt(a, b);
  return {need[0] ? masked_fill(shared, a_lost, zero()) : Tensor(),
          need[1] ? masked_fill(shared, b_lost, zero()) : Tensor()};
}
}  // namespace

Vjp add_backward(const Scalar& alpha) {
  return [alpha](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    return TensorList{g[0], need[1] ? (alpha.to_double() == 1.0 ? g[0] : mul(g[0], scalar_tensor(alpha))) : Tensor()};
  };
}

Vjp sub_backward(const Scalar& alpha) {
  const double neg = -alpha.to_double();
  return [neg](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    return TensorList{g[0], need[1] ? mul(g[0], scalar_tensor(neg)) : Tensor()};
  };
}

Vjp mul_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    return TensorList{need[0] ? mul(g[0], s[1]) : Tensor(), need[1] ? mul(g[0], s[0]) : Tensor()};
  };
}

Vjp div_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    // d(a/b)/db = -a / b^2
    return TensorList{need[0] ? div(g[0], s[1]) : Tensor(),
                      need[1] ? neg(mul(g[0], div(s[0], mul(s[1], s[1])))) : Tensor()};
  };
}

Vjp rounding_div_backward() {
  // A step function: zero almost everywhere.
  return [](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    return TensorList{need[0] ? zeros_like(g[0]) : Tensor(), need[1] ? zeros_like(g[0]) : Tensor()};
  };
}

Vjp remainder_backward() {
  // remainder(a, b) = a - b * floor(a / b)
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    return TensorList{need[0] ? g[0] : Tensor(),
                      need[1] ? neg(mul(g[0], div(s[0], s[1], "floor"))) : Tensor()};
  };
}

Vjp maximum_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    return pick_backward(g[0], s[0], s[1], /*max=*/true, need);
  };
}

Vjp minimum_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    return pick_backward(g[0], s[0], s[1], /*max=*/false, need);
  };
}

Vjp where_backward() {
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    return TensorList{need[0] ? where(s[0], g[0], zero()) : Tensor(),
                      need[1] ? where(s[0], zero(), g[0]) : Tensor()};
  };
}

Vjp lerp_backward() {
  // out = start + w * (end - start)
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor& w = s[2];
    // A Python-number weight stays a float64 scalar (1 - w on two wrapped
    // numbers would round to the default float dtype).
    const Tensor one_minus_w = w.impl()->wrapped_number ? scalar_tensor(1.0 - w.item().to_double())
                                                        : sub(scalar_tensor(1.0), w);
    return TensorList{need[0] ? mul(g[0], one_minus_w) : Tensor(),
                      need[1] ? mul(g[0], w) : Tensor(),
                      need[2] ? mul(g[0], sub(s[1], s[0])) : Tensor()};
  };
}

Vjp masked_fill_backward() {
  // The filled positions come from value (summed to its 0-d shape by the engine).
  return [](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    return TensorList{need[0] ? masked_fill(g[0], s[0], zero()) : Tensor(),
                      need[1] ? where(s[0], g[0], zero()) : Tensor()};
  };
}

}  // namespace ember::autograd::functions
