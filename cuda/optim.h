// Fused multi-tensor optimizer steps on the GPU, with cpu/optim.h's
// contracts: contiguous float32/float64 tensors on one device, state created
// by the front-end. Every tensor is cut into chunks and all chunks of one
// dtype are updated by a single kernel launch. No CUDA headers here; a CPU
// build links cuda/no_cuda_nn.cpp instead.
#pragma once
#include <vector>

#include <ember/core/ops/optim.h>

namespace ember::cuda {

void sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
         const std::vector<Tensor>& momentum_buffers, const std::vector<bool>& init_buffer, const SgdOptions& o);
void adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
          const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_exp_avg_sqs,
          const std::vector<double>& step, const AdamOptions& o);
// grad_avgs: defined only when centered; momentum_buffers only when momentum > 0.
void rmsprop(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
             const std::vector<Tensor>& momentum_buffers, const RmspropOptions& o);
void adagrad(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& state_sums, const std::vector<double>& step, const AdagradOptions& o);

}  // namespace ember::cuda
