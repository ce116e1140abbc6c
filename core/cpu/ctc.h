// CPU kernels of ctc_loss's alignment recursion (core/ops/ctc.cpp), in log
// space over the blank-extended labels blank, l1, blank, l2, ..., blank.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// Per sample n (in parallel): nll[n] = -log of the summed probability of
// every alignment of its first 2 * target_lengths[n] + 1 extended labels
// (extended: int64 [N, S]) with its first input_lengths[n] frames of
// log_probs [T, N, C] (contiguous, float32/float64). log_alpha [T, N, S]
// keeps the forward variables for the backward. An empty input gives 0 for
// an empty target, +inf otherwise; so does an impossible alignment.
void ctc_forward(Tensor& nll, Tensor& log_alpha, const Tensor& log_probs, const Tensor& extended,
                 const int64_t* input_lengths, const int64_t* target_lengths, int64_t blank);

// grad [T, N, C] = grad_nll[n] * d nll[n] / d log_probs (the derivative with
// respect to the log-probabilities themselves), from the saved log_alpha and
// the backward variables computed here; zero past a sample's input length,
// and for samples whose nll is infinite.
void ctc_backward(Tensor& grad, const Tensor& grad_nll, const Tensor& nll, const Tensor& log_alpha,
                  const Tensor& log_probs, const Tensor& extended, const int64_t* input_lengths,
                  const int64_t* target_lengths, int64_t blank);

}  // namespace ember::cpu
