// Backward formulas of the softmax family, from the saved output y (which
// keeps its history, so double backward works).
#include <ember/autograd/functions/softmax.h>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/unary.h>

namespace ember::autograd::functions {

Vjp softmax_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& y = s[0];
    return TensorList{mul(y, sub(g[0], sum(mul(g[0], y), {dim}, /*keepdim=*/true)))};
  };
}

Vjp log_softmax_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor p = exp(s[0]);  // softmax(x)
    return TensorList{sub(g[0], mul(p, sum(g[0], {dim}, /*keepdim=*/true)))};
  };
}

}  // namespace ember::autograd::functions
