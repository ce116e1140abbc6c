// CPU kernels of the optim family: one fused pass over each tensor, all
// tensors contiguous and of one dtype (float32 or float64) per parameter. The
// front-end (core/ops/optim.cpp) checks arguments, creates missing state and
// handles non-contiguous or half-precision tensors through work copies.
#pragma once
#include <vector>

#include <ember/core/ops/optim.h>

namespace ember::cpu {

// init_buffer[i]: the momentum buffer of param i starts as its first update.
void sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
         const std::vector<Tensor>& momentum_buffers, const std::vector<bool>& init_buffer,
         const SgdOptions& o);
// step[i]: param i's step count after this step (for bias correction).
void adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
          const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
          const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& step,
          const AdamOptions& o);
void rmsprop(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
             const std::vector<Tensor>& momentum_buffers, const RmspropOptions& o);
void adagrad(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& state_sums, const std::vector<double>& step,
             const AdagradOptions& o);

}  // namespace ember::cpu
