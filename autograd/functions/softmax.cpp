// Backward formulas of the softmax family. Under create_graph the output is
// recomputed from the saved input: the engine unpacks a saved output without
// its history, which would drop the output's dependence on x from the second
// derivative. Plain backward uses the saved output (no extra exp pass).
#include <ember/autograd/functions/softmax.h>

#include <ember/autograd/grad_mode.h>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/softmax.h>

namespace ember::autograd::functions {

Vjp softmax_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor y = grad_enabled() ? softmax(s[0], dim) : s[1];
    return TensorList{mul(y, sub(g[0], sum(mul(g[0], y), {dim}, /*keepdim=*/true)))};
  };
}

Vjp log_softmax_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    // exp(y) is softmax(x); softmax(y) equals it (y's exps sum to one) and is
    // differentiable with the ops at hand, so double backward works.
    const Tensor p = grad_enabled() ? softmax(s[0], dim) : softmax(s[1], dim);
    return TensorList{sub(g[0], mul(p, sum(g[0], {dim}, /*keepdim=*/true)))};
  };
}

}  // namespace ember::autograd::functions
