// Runs backward over the graph: dependency counting, topological order,
// gradient summation, accumulation into leaves.
#pragma once
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

}  // namespace ember::autograd
