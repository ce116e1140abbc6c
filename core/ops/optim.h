// Optimizer updates (the optim family): each call updates every parameter of
// one param group in place, with the state buffers torch.optim keeps under the
// same names. The Python classes in ember.optim gather a group's tensors and
// make one call per group per step. Updates run without autograd and bump the
// version counter of every tensor they write.
//
// State lists are parallel to `params`. A buffer that does not exist yet (the
// first step) is an undefined Tensor: the call creates it and writes it back
// into the list, so the caller can store it. `steps` are 0-d float32 tensors
// (torch's 'step' state); each call adds one to them before using them.
#pragma once
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

struct SgdOptions {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};
// momentum_buffers: used (and created with the first gradient) when momentum != 0.
void sgd_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
          std::vector<Tensor>& momentum_buffers, const SgdOptions& o);

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false;
  bool decoupled_weight_decay = false;  // AdamW: p *= 1 - lr * weight_decay
};
// max_exp_avg_sqs: used only with amsgrad.
void adam_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
           std::vector<Tensor>& exp_avgs, std::vector<Tensor>& exp_avg_sqs,
           std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps, const AdamOptions& o);

struct RmspropOptions {
  double lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};
// grad_avgs: used only when centered; momentum_buffers only when momentum > 0.
void rmsprop_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& square_avgs, std::vector<Tensor>& grad_avgs,
              std::vector<Tensor>& momentum_buffers, const std::vector<Tensor>& steps,
              const RmspropOptions& o);

struct AdagradOptions {
  double lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10;
  bool maximize = false;
};
void adagrad_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& state_sums, const std::vector<Tensor>& steps, const AdagradOptions& o);

}  // namespace ember
