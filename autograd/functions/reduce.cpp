#include <ember/autograd/functions/reduce.h>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/shape.h>

namespace ember::autograd::functions {

Tensor expand_reduced(const Tensor& g, const Shape& keep_shape, const Shape& in_shape) {
  return expand(reshape(g, keep_shape), in_shape);
}

Vjp sum_backward(const Shape& keep_shape, const Shape& in_shape) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{expand_reduced(g[0], keep_shape, in_shape)};
  };
}

Vjp mean_backward(const Shape& keep_shape, const Shape& in_shape, int64_t reduced_count) {
  const double scale = reduced_count ? 1.0 / static_cast<double>(reduced_count) : 0.0;
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{mul(expand_reduced(g[0], keep_shape, in_shape), scalar_tensor(scale))};
  };
}

}  // namespace ember::autograd::functions
