// Layers of the C++ frontend: Linear, ReLU, Dropout, Flatten and Sequential.
// Each layer's forward maps one Tensor to one Tensor, so Sequential chains them.
#pragma once
#include <cstdint>
#include <memory>

#include <ember/nn/module.h>

namespace ember::nn {

// A module with a Tensor -> Tensor forward, the unit Sequential chains.
class UnaryModule : public Module {
 public:
  using Module::Module;
  virtual Tensor forward(const Tensor& input) = 0;
  Tensor operator()(const Tensor& input) { return forward(input); }
};

// y = x W^T + b with W [out, in]; PyTorch's default init: weight and bias
// uniform in +-1/sqrt(in_features) (kaiming_uniform with a = sqrt(5)).
class Linear : public UnaryModule {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& input) override;
  void reset_parameters();

  int64_t in_features, out_features;
  Tensor weight, bias;  // bias undefined when bias=false
};

class ReLU : public UnaryModule {
 public:
  ReLU() : UnaryModule("ReLU") {}
  Tensor forward(const Tensor& input) override;
};

// Zeros elements with probability p while training; identity in eval().
class Dropout : public UnaryModule {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  double p;
};

class Flatten : public UnaryModule {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : UnaryModule("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& input) override;
  int64_t start_dim, end_dim;
};

// Children are named "0", "1", ... in push_back order, as in Python.
class Sequential : public UnaryModule {
 public:
  Sequential() : UnaryModule("Sequential") {}
  template <class M>
  std::shared_ptr<M> push_back(std::shared_ptr<M> module) {
    std::shared_ptr<UnaryModule> m = module;
    add_child(std::to_string(layers_.size()), m);
    layers_.push_back(m);
    return module;
  }
  Tensor forward(const Tensor& input) override;
  size_t size() const { return layers_.size(); }
  const std::shared_ptr<UnaryModule>& operator[](size_t i) const { return layers_.at(i); }

 private:
  std::vector<std::shared_ptr<UnaryModule>> layers_;
};

}  // namespace ember::nn
