// Backward of the loss family's fused kernels (core/ops/loss.cpp, core/ops/ctc.cpp).
#pragma once
#include <vector>

#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// Per-position loss wt * (lse - x_t) over input x viewed as [outer, classes,
// inner]; saved {x, target (int64, input's non-class shape), wt, lse}.
// Without create_graph the gradient is one fused kernel; under create_graph it
// is g * wt * (softmax(x) - one_hot(t)) in ember ops, so double backward works.
Vjp cross_entropy_backward(int64_t class_dim, int64_t ignore_index, const Shape& view);

// nll_loss on the GPU (core/ops/loss.cpp): per-position loss -wt * x_t over
// log-probabilities x viewed as [outer, classes, inner]; saved {x, target
// (int64), wt}. Without create_graph one kernel; under create_graph
// -g * wt * one_hot(t) in ember ops.
Vjp nll_backward(int64_t class_dim, int64_t ignore_index, const Shape& view);

// Elementwise binary_cross_entropy, inputs {x, target, weight}, saved the
// same: torch's gradient gx = w (x - t) / max(x (1 - x), 1e-12), finite at
// x = 0 and 1 where the clamped logs cut the chain rule.
Vjp binary_cross_entropy_backward();

// ctc_alignment_nll (core/ops/ctc.cpp): saved {log_probs (as given),
// log_alpha, nll, extended targets}; the CPU kernel's beta recursion. Its
// result is not differentiable again: under create_graph a second backward
// raises, as torch's ctc_loss does.
Vjp ctc_backward(std::vector<int64_t> input_lengths, std::vector<int64_t> target_lengths, int64_t blank);

}  // namespace ember::autograd::functions
