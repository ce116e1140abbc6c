// Backward of the fused scaled_dot_product_attention (core/ops/attention.cpp).
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// Inputs {query, key, value}; saved {query, key, value, out, logsumexp}. Runs
// the CUDA backward kernels. Under create_graph the gradients it returns carry
// a node that refuses a second backward (the kernels are not differentiable):
// the message says to disable the flash path.
Vjp scaled_dot_product_flash_attention_backward(double scale, bool is_causal);

}  // namespace ember::autograd::functions
