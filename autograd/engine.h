// Runs backward over the graph: dependency counting, topological order,
// gradient summation, accumulation into leaves.
#pragma once
#include <functional>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::autograd {

// Gradients of `roots` (with seeds `grad_roots`, undefined = ones for a
// scalar root) accumulated into the .grad of the leaves they reach.
void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph,
              bool create_graph);

// Gradients of `outputs` with respect to `inputs`, returned instead of
// accumulated. An input the outputs do not depend on gets an undefined
// tensor when allow_unused, and an error otherwise.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph, bool create_graph,
                         bool allow_unused);

// Runs `callback` once, when the backward pass running on this thread has
// accumulated every gradient (torch's Variable._execution_engine.queue_callback).
// Callbacks run in the order queued and may queue more; they are dropped when
// backward fails. Raises when no backward pass is running.
void queue_callback(std::function<void()> callback);

// A hook on a leaf that runs after AccumulateGrad wrote its .grad, with the
// leaf itself (torch's Tensor.register_post_accumulate_grad_hook). Returns an
// id for remove_post_accumulate_grad_hook.
using PostAccumulateGradHook = std::function<void(const Tensor&)>;
int register_post_accumulate_grad_hook(const Tensor& leaf, PostAccumulateGradHook hook);
void remove_post_accumulate_grad_hook(const Tensor& leaf, int handle);

}  // namespace ember::autograd
