#include <ember/optim/optimizer.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/factory.h>

namespace ember::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  for (size_t i = 0; i < params_.size(); ++i) {
    EMBER_CHECK(params_[i].defined(), ValueError, "optimizer: parameter ", i, " is an undefined tensor");
    EMBER_CHECK(params_[i].is_leaf(), ValueError, "optimizer: can't optimize a non-leaf Tensor (parameter ", i,
                ")");
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (auto& p : params_) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      g = g.detach();
      g.zero_();
    }
  }
}

std::vector<size_t> Optimizer::with_grad(std::vector<Tensor>& params, std::vector<Tensor>& grads) const {
  std::vector<size_t> idx;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = params_[i].grad();
    if (!g.defined()) continue;
    idx.push_back(i);
    params.push_back(params_[i]);
    grads.push_back(g);
  }
  return idx;
}

namespace {
// Step counters (0-d float32, as in Python's state) for params stepped for the first time.
void start_step_counters(std::vector<Tensor>& steps, const std::vector<size_t>& idx) {
  for (size_t i : idx)
    if (!steps[i].defined()) steps[i] = zeros({}, DType::Float32);
}

// The multi-tensor calls take state lists parallel to their params: gather
// the state of the parameters stepped now, then store what the call created.
std::vector<Tensor> gather(const std::vector<Tensor>& state, const std::vector<size_t>& idx) {
  std::vector<Tensor> out;
  out.reserve(idx.size());
  for (size_t i : idx) out.push_back(state[i]);
  return out;
}
void scatter(std::vector<Tensor>& state, const std::vector<Tensor>& part, const std::vector<size_t>& idx) {
  for (size_t k = 0; k < idx.size(); ++k) state[idx[k]] = part[k];
}
}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions o)
    : Optimizer(std::move(params)), options(o), momentum_buffers_(params_.size()) {
  EMBER_CHECK(o.lr >= 0, ValueError, "SGD: invalid learning rate: ", o.lr);
  EMBER_CHECK(o.momentum >= 0, ValueError, "SGD: invalid momentum value: ", o.momentum);
  EMBER_CHECK(o.weight_decay >= 0, ValueError, "SGD: invalid weight_decay value: ", o.weight_decay);
  EMBER_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0), ValueError,
              "SGD: nesterov momentum requires a momentum and zero dampening");
}

void SGD::step() {
  std::vector<Tensor> params, grads;
  const auto idx = with_grad(params, grads);
  if (idx.empty()) return;
  std::vector<Tensor> bufs = gather(momentum_buffers_, idx);
  ember::SgdOptions o;
  o.lr = options.lr;
  o.momentum = options.momentum;
  o.dampening = options.dampening;
  o.weight_decay = options.weight_decay;
  o.nesterov = options.nesterov;
  o.maximize = options.maximize;
  sgd_(params, grads, bufs, o);
  scatter(momentum_buffers_, bufs, idx);
}

Adam::Adam(std::vector<Tensor> params, AdamOptions o) : Adam(std::move(params), o, false) {}

Adam::Adam(std::vector<Tensor> params, AdamOptions o, bool decoupled)
    : Optimizer(std::move(params)),
      options(o),
      decoupled_(decoupled),
      exp_avgs_(params_.size()),
      exp_avg_sqs_(params_.size()),
      max_exp_avg_sqs_(params_.size()),
      steps_(params_.size()) {
  const char* name = decoupled ? "AdamW" : "Adam";
  EMBER_CHECK(o.lr >= 0, ValueError, name, ": invalid learning rate: ", o.lr);
  EMBER_CHECK(o.eps >= 0, ValueError, name, ": invalid epsilon value: ", o.eps);
  EMBER_CHECK(o.betas.first >= 0 && o.betas.first < 1, ValueError, name,
              ": invalid beta parameter at index 0: ", o.betas.first);
  EMBER_CHECK(o.betas.second >= 0 && o.betas.second < 1, ValueError, name,
              ": invalid beta parameter at index 1: ", o.betas.second);
  EMBER_CHECK(o.weight_decay >= 0, ValueError, name, ": invalid weight_decay value: ", o.weight_decay);
}

void Adam::step() {
  std::vector<Tensor> params, grads;
  const auto idx = with_grad(params, grads);
  if (idx.empty()) return;
  start_step_counters(steps_, idx);
  std::vector<Tensor> m = gather(exp_avgs_, idx), v = gather(exp_avg_sqs_, idx),
                      vmax = gather(max_exp_avg_sqs_, idx), steps = gather(steps_, idx);
  ember::AdamOptions o;
  o.lr = options.lr;
  o.beta1 = options.betas.first;
  o.beta2 = options.betas.second;
  o.eps = options.eps;
  o.weight_decay = options.weight_decay;
  o.amsgrad = options.amsgrad;
  o.maximize = options.maximize;
  o.decoupled_weight_decay = decoupled_;
  adam_(params, grads, m, v, vmax, steps, o);
  scatter(exp_avgs_, m, idx);
  scatter(exp_avg_sqs_, v, idx);
  scatter(max_exp_avg_sqs_, vmax, idx);
}

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions o)
    : Optimizer(std::move(params)),
      options(o),
      square_avgs_(params_.size()),
      grad_avgs_(params_.size()),
      momentum_buffers_(params_.size()),
      steps_(params_.size()) {
  EMBER_CHECK(o.lr >= 0, ValueError, "RMSprop: invalid learning rate: ", o.lr);
  EMBER_CHECK(o.eps >= 0, ValueError, "RMSprop: invalid epsilon value: ", o.eps);
  EMBER_CHECK(o.momentum >= 0, ValueError, "RMSprop: invalid momentum value: ", o.momentum);
  EMBER_CHECK(o.weight_decay >= 0, ValueError, "RMSprop: invalid weight_decay value: ", o.weight_decay);
  EMBER_CHECK(o.alpha >= 0, ValueError, "RMSprop: invalid alpha value: ", o.alpha);
}

void RMSprop::step() {
  std::vector<Tensor> params, grads;
  const auto idx = with_grad(params, grads);
  if (idx.empty()) return;
  start_step_counters(steps_, idx);
  std::vector<Tensor> sq = gather(square_avgs_, idx), ga = gather(grad_avgs_, idx),
                      buf = gather(momentum_buffers_, idx), steps = gather(steps_, idx);
  ember::RmspropOptions o;
  o.lr = options.lr;
  o.alpha = options.alpha;
  o.eps = options.eps;
  o.weight_decay = options.weight_decay;
  o.momentum = options.momentum;
  o.centered = options.centered;
  o.maximize = options.maximize;
  rmsprop_(params, grads, sq, ga, buf, steps, o);
  scatter(square_avgs_, sq, idx);
  scatter(grad_avgs_, ga, idx);
  scatter(momentum_buffers_, buf, idx);
}

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions o)
    : Optimizer(std::move(params)), options(o), state_sums_(params_.size()), steps_(params_.size()) {
  EMBER_CHECK(o.lr >= 0, ValueError, "Adagrad: invalid learning rate: ", o.lr);
  EMBER_CHECK(o.lr_decay >= 0, ValueError, "Adagrad: invalid lr_decay value: ", o.lr_decay);
  EMBER_CHECK(o.weight_decay >= 0, ValueError, "Adagrad: invalid weight_decay value: ", o.weight_decay);
  EMBER_CHECK(o.initial_accumulator_value >= 0, ValueError, "Adagrad: invalid initial_accumulator_value value: ",
              o.initial_accumulator_value);
  EMBER_CHECK(o.eps >= 0, ValueError, "Adagrad: invalid epsilon value: ", o.eps);
}

void Adagrad::step() {
  std::vector<Tensor> params, grads;
  const auto idx = with_grad(params, grads);
  if (idx.empty()) return;
  start_step_counters(steps_, idx);
  std::vector<Tensor> sums = gather(state_sums_, idx), steps = gather(steps_, idx);
  ember::AdagradOptions o;
  o.lr = options.lr;
  o.lr_decay = options.lr_decay;
  o.weight_decay = options.weight_decay;
  o.initial_accumulator_value = options.initial_accumulator_value;
  o.eps = options.eps;
  o.maximize = options.maximize;
  adagrad_(params, grads, sums, steps, o);
  scatter(state_sums_, sums, idx);
}

}  // namespace ember::optim
