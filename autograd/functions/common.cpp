#include <ember/autograd/functions/common.h>

#include <ember/core/ops/factory.h>

namespace ember::autograd::functions {

Vjp zero_backward() {
  return [](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    TensorList out;
    for (bool n : need) out.push_back(n ? zeros_like(g[0]) : Tensor());
    return out;
  };
}

}  // namespace ember::autograd::functions
