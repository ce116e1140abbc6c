// CPU kernels of the loss family: cross_entropy on class indices, fused with
// log_softmax, over a contiguous [outer, classes, inner] input.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// For each position p = (o, i): lse = logsumexp over classes, wt = weight[t]
// (1 without weight, 0 where t == ignore_index) and loss = wt * (lse - x_t).
// target: int64 [outer * inner], already range-checked; loss / wt / lse too.
void cross_entropy_forward(Tensor& loss, Tensor& wt, Tensor& lse, const Tensor& x, const Tensor& target,
                           const Tensor& weight, int64_t ignore_index, int64_t outer, int64_t classes, int64_t inner);
// gx = gl * wt * (softmax(x) - one_hot(t)), softmax from the saved lse.
void cross_entropy_backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& lse, const Tensor& x,
                            const Tensor& target, int64_t ignore_index, int64_t outer, int64_t classes,
                            int64_t inner);

}  // namespace ember::cpu
