#include <ember/autograd/functions/copy.h>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/shape.h>

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

Vjp copy_slices_backward(const Tensor& keep, const Tensor& positions, const Shape& view_shape) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    return TensorList{need[0] ? mul(g[0], keep) : Tensor(),
                      need[1] ? reshape(index_select(reshape(g[0], {-1}), 0, positions), view_shape) : Tensor()};
  };
}

Vjp view_of_base_backward(const Tensor& positions, const Shape& base_shape) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    const Tensor flat = zeros({numel_of(base_shape)}, g[0].dtype(), g[0].device());
    return TensorList{reshape(index_add(flat, 0, positions, reshape(g[0], {-1})), base_shape)};
  };
}

}  // namespace ember::autograd::functions
