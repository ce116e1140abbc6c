#include <ember/optim/optimizer.h>

#include <map>
#include <unordered_set>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/factory.h>

namespace ember::optim {

// ---- Optimizer: groups, state and the state dict

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    for (const Tensor& p : group_params(g)) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
      } else {
        grad = grad.detach();
        grad.zero_();
      }
    }
  }
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (size_t g = 0; g < num_param_groups(); ++g)
    for (const Tensor& p : group_params(g)) out.push_back(p);
  return out;
}

void Optimizer::check_new_params(const char* name, const std::vector<Tensor>& params) const {
  std::unordered_set<const TensorImpl*> seen;
  for (size_t g = 0; g < num_param_groups(); ++g)
    for (const Tensor& p : group_params(g)) seen.insert(p.impl());
  std::unordered_set<const TensorImpl*> mine;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    EMBER_CHECK(p.defined(), ValueError, name, ": parameter ", i, " is an undefined tensor");
    EMBER_CHECK(p.is_leaf(), ValueError, name, ": can't optimize a non-leaf Tensor (parameter ", i, ")");
    EMBER_CHECK(mine.insert(p.impl()).second, ValueError, name,
                ": optimizer contains a parameter group with duplicate parameters (parameter ", i, ")");
    EMBER_CHECK(!seen.count(p.impl()), ValueError, name,
                ": some parameters appear in more than one parameter group (parameter ", i, ")");
  }
}

Tensor& Optimizer::state_slot(const Tensor& param, const std::string& name) {
  NamedState& s = state_[param.impl()];
  for (auto& [k, t] : s)
    if (k == name) return t;
  s.emplace_back(name, Tensor());
  return s.back().second;
}

std::vector<size_t> Optimizer::with_grad(const std::vector<Tensor>& group, std::vector<Tensor>& params,
                                         std::vector<Tensor>& grads) const {
  std::vector<size_t> idx;
  for (size_t i = 0; i < group.size(); ++i) {
    Tensor g = group[i].grad();
    if (!g.defined()) continue;
    idx.push_back(i);
    params.push_back(group[i]);
    grads.push_back(g);
  }
  return idx;
}

std::vector<Tensor> Optimizer::gather(const std::vector<Tensor>& params, const std::string& name) {
  std::vector<Tensor> out;
  out.reserve(params.size());
  for (const Tensor& p : params) out.push_back(state_slot(p, name));
  return out;
}

void Optimizer::scatter(const std::vector<Tensor>& params, const std::string& name,
                        const std::vector<Tensor>& values) {
  for (size_t i = 0; i < params.size(); ++i)
    if (values[i].defined()) state_slot(params[i], name) = values[i];
}

std::vector<Tensor> Optimizer::steps_of(const std::vector<Tensor>& params) {
  std::vector<Tensor> out;
  for (const Tensor& p : params) {
    Tensor& s = state_slot(p, "step");
    if (!s.defined()) s = zeros({}, DType::Float32);
    out.push_back(s);
  }
  return out;
}

OptimizerState Optimizer::state_dict() const {
  OptimizerState out;
  int64_t index = 0;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    ParamGroupState group{group_hyper(g), {}};
    for (const Tensor& p : group_params(g)) {
      group.params.push_back(index);
      auto it = state_.find(p.impl());
      if (it != state_.end()) {
        NamedState named;
        for (const auto& [k, t] : it->second)
          if (t.defined()) named.emplace_back(k, t);
        if (!named.empty()) out.state.emplace_back(index, std::move(named));
      }
      ++index;
    }
    out.param_groups.push_back(std::move(group));
  }
  return out;
}

void Optimizer::load_state_dict(const OptimizerState& saved) {
  EMBER_CHECK(saved.param_groups.size() == num_param_groups(), ValueError,
              "load_state_dict: loaded state dict has a different number of parameter groups (",
              saved.param_groups.size(), ", the optimizer has ", num_param_groups(), ")");
  std::map<int64_t, Tensor> param_of;  // saved index -> this optimizer's parameter
  for (size_t g = 0; g < num_param_groups(); ++g) {
    const auto& mine = group_params(g);
    const auto& theirs = saved.param_groups[g].params;
    EMBER_CHECK(mine.size() == theirs.size(), ValueError, "load_state_dict: loaded state dict contains a parameter ",
                "group that doesn't match the size of optimizer's group (group ", g, ": ", theirs.size(), " vs ",
                mine.size(), " parameters)");
    for (size_t i = 0; i < mine.size(); ++i) param_of[theirs[i]] = mine[i];
  }
  std::unordered_map<const TensorImpl*, NamedState> state;
  NoGradGuard no_grad;
  for (const auto& [index, named] : saved.state) {
    auto it = param_of.find(index);
    if (it == param_of.end()) continue;  // as torch: state of unknown indices is not ours
    const Tensor& p = it->second;
    NamedState copy;
    for (const auto& [k, t] : named) {
      EMBER_CHECK(t.defined(), ValueError, "load_state_dict: state \"", k, "\" of parameter ", index,
                  " is undefined");
      // Copies: the optimizer that saved them may keep stepping.
      Tensor c = k == "step" || !is_floating(t.dtype())
                     ? t.to(p.device(), true)
                     : t.to(p.device(), p.dtype(), /*non_blocking=*/false, /*copy=*/true);
      if (k != "step") {
        EMBER_CHECK(c.shape() == p.shape(), ValueError, "load_state_dict: state \"", k, "\" of parameter ", index,
                    " has shape ", c.shape_str(), " but the parameter has shape ", p.shape_str());
      }
      copy.emplace_back(k, c);
    }
    state[p.impl()] = std::move(copy);
  }
  // All or nothing: a group whose saved options are invalid leaves every group as it was.
  std::vector<HyperParams> before;
  for (size_t g = 0; g < num_param_groups(); ++g) before.push_back(group_hyper(g));
  try {
    for (size_t g = 0; g < num_param_groups(); ++g) set_group_hyper(g, saved.param_groups[g].options);
  } catch (...) {
    for (size_t g = 0; g < num_param_groups(); ++g) set_group_hyper(g, before[g]);
    throw;
  }
  state_ = std::move(state);
}

namespace detail {
void from_hyper(const std::string& key, const HyperValue& h, double& out) {
  EMBER_CHECK(h.kind == HyperValue::Number, ValueError, "load_state_dict: param group option \"", key,
              "\" must be a number");
  out = h.x;
}
void from_hyper(const std::string& key, const HyperValue& h, bool& out) {
  EMBER_CHECK(h.kind == HyperValue::Bool, ValueError, "load_state_dict: param group option \"", key,
              "\" must be a bool");
  out = h.flag;
}
void from_hyper(const std::string& key, const HyperValue& h, std::pair<double, double>& out) {
  EMBER_CHECK(h.kind == HyperValue::Pair, ValueError, "load_state_dict: param group option \"", key,
              "\" must be a pair of numbers");
  out = {h.x, h.y};
}
}  // namespace detail

// ---- the optimizers

void SGDOptions::check(const char* name) const {
  EMBER_CHECK(lr >= 0, ValueError, name, ": invalid learning rate: ", lr);
  EMBER_CHECK(momentum >= 0, ValueError, name, ": invalid momentum value: ", momentum);
  EMBER_CHECK(weight_decay >= 0, ValueError, name, ": invalid weight_decay value: ", weight_decay);
  EMBER_CHECK(!nesterov || (momentum > 0 && dampening == 0), ValueError, name,
              ": nesterov momentum requires a momentum and zero dampening");
}

void SGD::step() {
  for (const ParamGroup& group : param_groups_) {
    std::vector<Tensor> params, grads;
    with_grad(group.params, params, grads);
    if (params.empty()) continue;
    const SGDOptions& go = group.options;
    std::vector<Tensor> bufs =
        go.momentum != 0 ? gather(params, "momentum_buffer") : std::vector<Tensor>(params.size());
    ember::SgdOptions o;
    o.lr = go.lr;
    o.momentum = go.momentum;
    o.dampening = go.dampening;
    o.weight_decay = go.weight_decay;
    o.nesterov = go.nesterov;
    o.maximize = go.maximize;
    sgd_(params, grads, bufs, o);
    if (go.momentum != 0) scatter(params, "momentum_buffer", bufs);
  }
}

void AdamOptions::check(const char* name) const {
  EMBER_CHECK(lr >= 0, ValueError, name, ": invalid learning rate: ", lr);
  EMBER_CHECK(eps >= 0, ValueError, name, ": invalid epsilon value: ", eps);
  EMBER_CHECK(betas.first >= 0 && betas.first < 1, ValueError, name, ": invalid beta parameter at index 0: ",
              betas.first);
  EMBER_CHECK(betas.second >= 0 && betas.second < 1, ValueError, name, ": invalid beta parameter at index 1: ",
              betas.second);
  EMBER_CHECK(weight_decay >= 0, ValueError, name, ": invalid weight_decay value: ", weight_decay);
}

void Adam::step() {
  for (const ParamGroup& group : param_groups_) {
    std::vector<Tensor> params, grads;
    with_grad(group.params, params, grads);
    if (params.empty()) continue;
    const AdamOptions& go = group.options;
    std::vector<Tensor> steps = steps_of(params);
    std::vector<Tensor> m = gather(params, "exp_avg"), v = gather(params, "exp_avg_sq");
    std::vector<Tensor> vmax = go.amsgrad ? gather(params, "max_exp_avg_sq") : std::vector<Tensor>(params.size());
    ember::AdamOptions o;
    o.lr = go.lr;
    o.beta1 = go.betas.first;
    o.beta2 = go.betas.second;
    o.eps = go.eps;
    o.weight_decay = go.weight_decay;
    o.amsgrad = go.amsgrad;
    o.maximize = go.maximize;
    o.decoupled_weight_decay = decoupled_;
    adam_(params, grads, m, v, vmax, steps, o);
    scatter(params, "exp_avg", m);
    scatter(params, "exp_avg_sq", v);
    if (go.amsgrad) scatter(params, "max_exp_avg_sq", vmax);
  }
}

void RMSpropOptions::check(const char* name) const {
  EMBER_CHECK(lr >= 0, ValueError, name, ": invalid learning rate: ", lr);
  EMBER_CHECK(eps >= 0, ValueError, name, ": invalid epsilon value: ", eps);
  EMBER_CHECK(momentum >= 0, ValueError, name, ": invalid momentum value: ", momentum);
  EMBER_CHECK(weight_decay >= 0, ValueError, name, ": invalid weight_decay value: ", weight_decay);
  EMBER_CHECK(alpha >= 0, ValueError, name, ": invalid alpha value: ", alpha);
}

void RMSprop::step() {
  for (const ParamGroup& group : param_groups_) {
    std::vector<Tensor> params, grads;
    with_grad(group.params, params, grads);
    if (params.empty()) continue;
    const RMSpropOptions& go = group.options;
    std::vector<Tensor> steps = steps_of(params);
    std::vector<Tensor> sq = gather(params, "square_avg"), ga = gather(params, "grad_avg"),
                        buf = gather(params, "momentum_buffer");
    ember::RmspropOptions o;
    o.lr = go.lr;
    o.alpha = go.alpha;
    o.eps = go.eps;
    o.weight_decay = go.weight_decay;
    o.momentum = go.momentum;
    o.centered = go.centered;
    o.maximize = go.maximize;
    rmsprop_(params, grads, sq, ga, buf, steps, o);
    scatter(params, "square_avg", sq);
    scatter(params, "grad_avg", ga);
    scatter(params, "momentum_buffer", buf);
  }
}

void AdagradOptions::check(const char* name) const {
  EMBER_CHECK(lr >= 0, ValueError, name, ": invalid learning rate: ", lr);
  EMBER_CHECK(lr_decay >= 0, ValueError, name, ": invalid lr_decay value: ", lr_decay);
  EMBER_CHECK(weight_decay >= 0, ValueError, name, ": invalid weight_decay value: ", weight_decay);
  EMBER_CHECK(initial_accumulator_value >= 0, ValueError, name, ": invalid initial_accumulator_value value: ",
              initial_accumulator_value);
  EMBER_CHECK(eps >= 0, ValueError, name, ": invalid epsilon value: ", eps);
}

void Adagrad::step() {
  for (const ParamGroup& group : param_groups_) {
    std::vector<Tensor> params, grads;
    with_grad(group.params, params, grads);
    if (params.empty()) continue;
    const AdagradOptions& go = group.options;
    std::vector<Tensor> steps = steps_of(params);
    std::vector<Tensor> sums = gather(params, "sum");
    ember::AdagradOptions o;
    o.lr = go.lr;
    o.lr_decay = go.lr_decay;
    o.weight_decay = go.weight_decay;
    o.initial_accumulator_value = go.initial_accumulator_value;
    o.eps = go.eps;
    o.maximize = go.maximize;
    adagrad_(params, grads, sums, steps, o);
    scatter(params, "sum", sums);
  }
}

}  // namespace ember::optim
