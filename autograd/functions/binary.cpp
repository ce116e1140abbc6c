#include <ember/autograd/functions/binary.h>

#include <ember/core/ops/binary.h>

namespace ember::autograd::functions {

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
                      need[1] ? mul(g[0], div(s[0], mul(s[1], s[1]))).mul(scalar_tensor(-1.0)) : Tensor()};
  };
}

}  // namespace ember::autograd::functions
