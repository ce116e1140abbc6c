// ember::nn::Module: the base of the C++ training frontend, as torch::nn::Module.
// A module owns named parameters, buffers and submodules; names of nested
// entries are dotted ("0.weight"), the same keys as Python's state_dict().
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::nn {

class Module {
 public:
  explicit Module(std::string name = "Module") : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }

  // Registration returns the stored tensor/module so layers can keep a handle
  // (a Tensor shares its data; to() changes it in place, keeping handles valid).
  Tensor register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor tensor);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }

  // train(false) == eval(); applies to every submodule.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Parameters then buffers of each module, depth first: Python's key order.
  std::vector<std::pair<std::string, Tensor>> state_dict() const;
  // Copies values into the existing tensors (shapes must match). strict: the
  // keys must be exactly this module's; otherwise extra/missing keys are skipped.
  void load_state_dict(const std::vector<std::pair<std::string, Tensor>>& state, bool strict = true);

  // Drops every parameter's gradient (set_to_none, torch's default).
  void zero_grad();
  // Casts floating parameters and buffers in place, like Python's `.data =`
  // swap: every handle sees the new dtype, requires_grad is kept, grads dropped.
  void to(DType dtype);

 protected:
  void add_child(const std::string& name, std::shared_ptr<Module> module);

 private:
  void collect(const std::string& prefix, bool recurse, bool params,
               std::vector<std::pair<std::string, Tensor>>& out) const;
  void collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const;
  static void check_name(const std::string& kind, const std::string& name);

  std::string name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

}  // namespace ember::nn
