// Per-tensor autograd state, allocated only for tensors in the graph.
#pragma once
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::autograd {

struct Node;

struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;        // null for leaves
  uint32_t output_nr = 0;               // which output of grad_fn this tensor is
  // Storage version when grad_fn was set. A view whose storage was written
  // since (through its base or a sibling view) gets its history re-derived
  // from the base before it is used.
  uint32_t history_version = 0;
  std::weak_ptr<Node> grad_accumulator; // leaves: the node that accumulates into .grad
  bool retains_grad = false;
  std::vector<std::pair<int, Tensor::Hook>> hooks;  // leaves only; non-leaf hooks live on grad_fn
  // Leaves only: run after AccumulateGrad wrote .grad (see engine.h).
  std::vector<std::pair<int, std::function<void(const Tensor&)>>> post_accumulate_hooks;
};

// The tensor's meta, created on first use.
AutogradMeta& meta(const Tensor& t);
// Null when the tensor has no autograd state.
inline AutogradMeta* meta_if(const Tensor& t) { return t.impl()->autograd.get(); }

}  // namespace ember::autograd
