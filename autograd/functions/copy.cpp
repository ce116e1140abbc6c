#include <ember/autograd/functions/copy.h>

namespace ember::autograd::functions {

Vjp to_backward(Device from) {
  return [from](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{g[0].to(from)};
  };
}

Vjp copy_backward() {
  return [](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{Tensor(), g[0]};
  };
}

}  // namespace ember::autograd::functions
