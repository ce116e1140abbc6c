// CUDA kernels of the loss family. No CUDA headers here: the core calls
// these; a CPU build links cuda/no_cuda_nn.cpp instead.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

// cpu::cross_entropy_forward on the GPU, one block per position p = (o, i) of
// x [outer, classes, inner] (contiguous; float32/float64/float16/bfloat16):
// lse = logsumexp over classes, wt = weight[t] (1 without weight, 0 where
// t == ignore_index), loss = wt * (lse - x_t). target: int64 [outer * inner],
// already range-checked. loss / wt / lse / weight are float64 for float64 x,
// else float32.
void cross_entropy_forward(Tensor& loss, Tensor& wt, Tensor& lse, const Tensor& x, const Tensor& target,
                           const Tensor& weight, int64_t ignore_index, int64_t outer, int64_t classes, int64_t inner);
// gx = gl * wt * (softmax(x) - one_hot(t)), softmax from the saved lse; gl in
// lse's dtype, gx in lse's dtype or in x's (float16/bfloat16 x: computed in
// float32, rounded once).
void cross_entropy_backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& lse, const Tensor& x,
                            const Tensor& target, int64_t ignore_index, int64_t outer, int64_t classes,
                            int64_t inner);

// nll_loss on log-probabilities x [outer, classes, inner], one thread per
// position: wt = weight[t] (1 without weight, 0 where t == ignore_index),
// loss = -wt * x_t. Dtypes as for cross_entropy_forward.
void nll_forward(Tensor& loss, Tensor& wt, const Tensor& x, const Tensor& target, const Tensor& weight,
                 int64_t ignore_index, int64_t outer, int64_t classes, int64_t inner);
// gx = 0 except gx[t] = -gl * wt at each position; gx and gl in wt's dtype.
void nll_backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& target, int64_t ignore_index,
                  int64_t outer, int64_t classes, int64_t inner);

}  // namespace ember::cuda
