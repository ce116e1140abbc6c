#include <ember/autograd/functions/shape.h>

#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>

namespace ember::autograd::functions {

Vjp reshape_backward(const Shape& in_shape) {
  return [in_shape](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{reshape(g[0], in_shape)};
  };
}

Vjp expand_backward(const Shape& in_shape) {
  return [in_shape](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{sum_to(g[0], in_shape)};
  };
}

Vjp permute_backward(const Dims& dims) {
  Dims inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[dims[i]] = static_cast<int64_t>(i);
  return [inverse](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{permute(g[0], inverse)};
  };
}

}  // namespace ember::autograd::functions
