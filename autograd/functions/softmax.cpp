#include <ember/autograd/functions/softmax.h>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/softmax.h>

namespace ember::autograd::functions {

Vjp softmax_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& y = s[0];
    return TensorList{mul(y, sub(g[0], sum(mul(g[0], y), {dim}, /*keepdim=*/true)))};
  };
}

Vjp log_softmax_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    // exp(y) is softmax(x); softmax(y) equals it (y's exps sum to one) and is
    // differentiable with the ops at hand, so double backward works.
    const Tensor p = softmax(s[0], dim);
    return TensorList{sub(g[0], mul(p, sum(g[0], {dim}, /*keepdim=*/true)))};
  };
}

}  // namespace ember::autograd::functions
