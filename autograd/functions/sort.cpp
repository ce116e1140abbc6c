#include <ember/autograd/functions/sort.h>

#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>

namespace ember::autograd::functions {

Vjp sort_backward(const Shape& in_shape, int64_t dim) {
  return [=](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    // A 0-d input is its own (only) value.
    if (in_shape.empty()) return TensorList{g[0]};
    // scatter_add is differentiable in its src, so double backward works.
    return TensorList{scatter_add(zeros(in_shape, g[0].dtype(), g[0].device()), dim, s[0], g[0])};
  };
}

}  // namespace ember::autograd::functions
