// ember::optim: the C++ optimizers, as torch::optim. Parameters come in
// param groups, each with its own hyperparameters (the options struct of its
// optimizer); per-parameter state is named as in Python ("exp_avg", "step").
// A step makes one multi-tensor call of core/ops/optim.h per group over the
// parameters that have a gradient. state_dict() has PyTorch's layout (state
// keyed by parameter index, param_groups with "params" index lists), and
// optim/serialize.h saves it as Python's ember.save would.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ember/core/ops/optim.h>
#include <ember/core/tensor.h>

namespace ember::optim {

// One hyperparameter of a param group, as a value of torch's param_groups
// dicts: a number, a flag, or a pair of numbers (Adam's betas).
struct HyperValue {
  enum Kind { Number, Bool, Pair } kind = Number;
  double x = 0, y = 0;  // Number: x; Pair: (x, y)
  bool flag = false;
};
using HyperParams = std::vector<std::pair<std::string, HyperValue>>;
using NamedState = std::vector<std::pair<std::string, Tensor>>;

struct ParamGroupState {
  HyperParams options;          // in the options struct's field order
  std::vector<int64_t> params;  // indices into the optimizer's parameters, group by group
};

// An optimizer's state_dict(), in PyTorch's layout.
struct OptimizerState {
  std::vector<std::pair<int64_t, NamedState>> state;  // parameter index -> its state; params without state absent
  std::vector<ParamGroupState> param_groups;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // set_to_none (torch's default): the next backward allocates fresh grads.
  void zero_grad(bool set_to_none = true);
  virtual void step() = 0;
  // Every group's parameters, in group order: the indices state_dict() uses.
  std::vector<Tensor> parameters() const;
  virtual size_t num_param_groups() const = 0;
  virtual const std::vector<Tensor>& group_params(size_t group) const = 0;

  OptimizerState state_dict() const;
  // Copies the saved state (cast to each parameter's dtype, "step" kept as
  // saved) and the groups' hyperparameters. The groups must have the sizes of
  // this optimizer's; keys this optimizer does not know are ignored.
  void load_state_dict(const OptimizerState& state);

 protected:
  Optimizer() = default;
  virtual HyperParams group_hyper(size_t group) const = 0;
  virtual void set_group_hyper(size_t group, const HyperParams& hyper) = 0;
  // Checks a new group's parameters: defined leaves, none already optimized.
  void check_new_params(const char* name, const std::vector<Tensor>& params) const;

  // The named state entry of a parameter (undefined until first set).
  Tensor& state_slot(const Tensor& param, const std::string& name);
  // Indices into `group` of its parameters that have a gradient, with those params and grads.
  std::vector<size_t> with_grad(const std::vector<Tensor>& group, std::vector<Tensor>& params,
                                std::vector<Tensor>& grads) const;
  // The state entry `name` of each parameter, and storing back what a call created.
  std::vector<Tensor> gather(const std::vector<Tensor>& params, const std::string& name);
  void scatter(const std::vector<Tensor>& params, const std::string& name, const std::vector<Tensor>& values);
  // Step counters (0-d float32, as in Python's state) for params stepped for the first time.
  std::vector<Tensor> steps_of(const std::vector<Tensor>& params);

 private:
  std::unordered_map<const TensorImpl*, NamedState> state_;
};

// The groups and hyperparameter plumbing every optimizer shares. Options
// provides check(name) (throws ValueError on invalid values) and
// fields(f) (calls f(name, member&) for each hyperparameter).
template <class Options>
class OptimizerWithOptions : public Optimizer {
 public:
  struct ParamGroup {
    std::vector<Tensor> params;
    Options options;
  };

  // A new group with its own options, or with the defaults (`options`).
  void add_param_group(std::vector<Tensor> params, const Options& group_options) {
    group_options.check(name_);
    check_new_params(name_, params);
    param_groups_.push_back({std::move(params), group_options});
  }
  void add_param_group(std::vector<Tensor> params) { add_param_group(std::move(params), options); }

  size_t num_param_groups() const override { return param_groups_.size(); }
  const std::vector<Tensor>& group_params(size_t group) const override { return param_groups_.at(group).params; }
  std::vector<ParamGroup>& param_groups() { return param_groups_; }
  const std::vector<ParamGroup>& param_groups() const { return param_groups_; }

  Options options;  // the defaults of groups added without options

 protected:
  OptimizerWithOptions(const char* name, std::vector<Tensor> params, const Options& defaults)
      : options(defaults), name_(name) {
    add_param_group(std::move(params));
  }
  HyperParams group_hyper(size_t group) const override;
  void set_group_hyper(size_t group, const HyperParams& hyper) override;

  const char* name_;
  std::vector<ParamGroup> param_groups_;
};

struct SGDOptions {
  SGDOptions(double lr = 1e-3) : lr(lr) {}  // NOLINT: SGD(params, 0.1) reads well
  double lr, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
  void check(const char* name) const;
  template <class F>
  void fields(F&& f) {
    f("lr", lr), f("momentum", momentum), f("dampening", dampening), f("weight_decay", weight_decay);
    f("nesterov", nesterov), f("maximize", maximize);
  }
};

// State: momentum_buffer (with momentum).
class SGD : public OptimizerWithOptions<SGDOptions> {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options)
      : OptimizerWithOptions("SGD", std::move(params), options) {}
  void step() override;
};

struct AdamOptions {
  AdamOptions(double lr = 1e-3) : lr(lr) {}  // NOLINT
  double lr;
  std::pair<double, double> betas{0.9, 0.999};
  double eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false;
  void check(const char* name) const;
  template <class F>
  void fields(F&& f) {
    f("lr", lr), f("betas", betas), f("eps", eps), f("weight_decay", weight_decay), f("amsgrad", amsgrad);
    f("maximize", maximize);
  }
};

// State: step, exp_avg, exp_avg_sq (and max_exp_avg_sq with amsgrad).
class Adam : public OptimizerWithOptions<AdamOptions> {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options) : Adam(std::move(params), options, false) {}
  void step() override;

 protected:
  Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled)
      : OptimizerWithOptions(decoupled ? "AdamW" : "Adam", std::move(params), options), decoupled_(decoupled) {}

 private:
  bool decoupled_;
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
  void check(const char* name) const;
  template <class F>
  void fields(F&& f) {
    f("lr", lr), f("momentum", momentum), f("alpha", alpha), f("eps", eps), f("centered", centered);
    f("weight_decay", weight_decay), f("maximize", maximize);
  }
};

// State: step, square_avg (grad_avg when centered, momentum_buffer with momentum).
class RMSprop : public OptimizerWithOptions<RMSpropOptions> {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions options)
      : OptimizerWithOptions("RMSprop", std::move(params), options) {}
  void step() override;
};

struct AdagradOptions {
  AdagradOptions(double lr = 1e-2) : lr(lr) {}  // NOLINT
  double lr, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10;
  bool maximize = false;
  void check(const char* name) const;
  template <class F>
  void fields(F&& f) {
    f("lr", lr), f("lr_decay", lr_decay), f("eps", eps), f("weight_decay", weight_decay);
    f("initial_accumulator_value", initial_accumulator_value), f("maximize", maximize);
  }
};

// State: step, sum.
class Adagrad : public OptimizerWithOptions<AdagradOptions> {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions options)
      : OptimizerWithOptions("Adagrad", std::move(params), options) {}
  void step() override;
};

// ---- template definitions

namespace detail {
inline HyperValue to_hyper(double v) { return {HyperValue::Number, v, 0, false}; }
inline HyperValue to_hyper(bool v) { return {HyperValue::Bool, 0, 0, v}; }
inline HyperValue to_hyper(const std::pair<double, double>& v) { return {HyperValue::Pair, v.first, v.second, false}; }
// Throws ValueError naming the key when the saved kind does not fit the field.
void from_hyper(const std::string& key, const HyperValue& h, double& out);
void from_hyper(const std::string& key, const HyperValue& h, bool& out);
void from_hyper(const std::string& key, const HyperValue& h, std::pair<double, double>& out);
}  // namespace detail

template <class Options>
HyperParams OptimizerWithOptions<Options>::group_hyper(size_t group) const {
  HyperParams out;
  Options o = param_groups_.at(group).options;
  o.fields([&](const char* key, auto& v) { out.emplace_back(key, detail::to_hyper(v)); });
  return out;
}

template <class Options>
void OptimizerWithOptions<Options>::set_group_hyper(size_t group, const HyperParams& hyper) {
  Options o = param_groups_.at(group).options;
  o.fields([&](const char* key, auto& v) {
    for (const auto& [k, h] : hyper)
      if (k == key) detail::from_hyper(k, h, v);
  });
  o.check(name_);
  param_groups_[group].options = o;
}

}  // namespace ember::optim
