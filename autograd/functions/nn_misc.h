// Backward formulas of embedding and dropout (core/ops/nn_misc.cpp).
#pragma once
#include <optional>

#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// Index-adds the output gradient rows into zeros of the weight's shape;
// `indices` is the flattened int64 input.
Vjp embedding_backward(const Shape& weight_shape, const Tensor& indices, std::optional<int64_t> padding_idx,
                       bool scale_grad_by_freq);
// grad * mask * scale through native_dropout_backward, which records itself,
// so the gradient is differentiable again (saved: the bool mask). The
// backward of native_dropout and of native_dropout_backward alike.
Vjp native_dropout_backward(double scale);

}  // namespace ember::autograd::functions
