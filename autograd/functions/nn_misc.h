// Backward formulas of embedding (core/ops/nn_misc.cpp).
#pragma once
#include <optional>

#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// Index-adds the output gradient rows into zeros of the weight's shape;
// `indices` is the flattened int64 input.
Vjp embedding_backward(const Shape& weight_shape, const Tensor& indices, std::optional<int64_t> padding_idx,
                       bool scale_grad_by_freq);

}  // namespace ember::autograd::functions
