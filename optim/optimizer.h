// ember::optim: the C++ optimizers, as torch::optim. Each holds its parameter
// list and per-parameter state and makes one multi-tensor call of
// core/ops/optim.h per step over the parameters that have a gradient.
#pragma once
#include <utility>
#include <vector>

#include <ember/core/ops/optim.h>
#include <ember/core/tensor.h>

namespace ember::optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // set_to_none (torch's default): the next backward allocates fresh grads.
  void zero_grad(bool set_to_none = true);
  virtual void step() = 0;
  const std::vector<Tensor>& parameters() const { return params_; }

 protected:
  // Indices of the parameters that have a gradient, and those gradients.
  std::vector<size_t> with_grad(std::vector<Tensor>& params, std::vector<Tensor>& grads) const;

  std::vector<Tensor> params_;
};

struct SGDOptions {
  SGDOptions(double lr = 1e-3) : lr(lr) {}  // NOLINT: SGD(params, 0.1) reads well
  double lr, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);
  void step() override;
  SGDOptions options;

 private:
  std::vector<Tensor> momentum_buffers_;  // parallel to params_; undefined until first used
};

struct AdamOptions {
  AdamOptions(double lr = 1e-3) : lr(lr) {}  // NOLINT
  double lr;
  std::pair<double, double> betas{0.9, 0.999};
  double eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options);
  void step() override;
  AdamOptions options;

 protected:
  Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled);

 private:
  bool decoupled_;
  std::vector<Tensor> exp_avgs_, exp_avg_sqs_, max_exp_avg_sqs_, steps_;
};

// Adam with decoupled weight decay (default weight_decay 1e-2, as torch).
struct AdamWOptions : AdamOptions {
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay = 1e-2; }  // NOLINT
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions options) : Adam(std::move(params), options, true) {}
};

struct RMSpropOptions {
  RMSpropOptions(double lr = 1e-2) : lr(lr) {}  // NOLINT
  double lr, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions options);
  void step() override;
  RMSpropOptions options;

 private:
  std::vector<Tensor> square_avgs_, grad_avgs_, momentum_buffers_, steps_;
};

struct AdagradOptions {
  AdagradOptions(double lr = 1e-2) : lr(lr) {}  // NOLINT
  double lr, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10;
  bool maximize = false;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions options);
  void step() override;
  AdagradOptions options;

 private:
  std::vector<Tensor> state_sums_, steps_;
};

}  // namespace ember::optim
