// ctc_loss's alignment recursion as one op on the CPU. nn.functional.ctc_loss
// checks the arguments, builds the blank-extended targets and reduces; this
// replaces its per-frame loop of ember ops where it can (CPU, float32/float64).
#pragma once
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

// Per sample n of log_probs [T, N, C] (CPU, float32 or float64): the negative
// log-likelihood of its blank-extended labels extended[n, :2 L_n + 1]
// (int64 [N, S]: blank, l1, blank, ..., l_Ln, blank; L_n = target_lengths[n])
// over its first input_lengths[n] frames. +inf for an impossible alignment;
// an empty input gives 0 for an empty target. Differentiable with respect to
// log_probs (the derivative with respect to the log-probabilities themselves;
// an impossible sample gets a zero gradient), once.
Tensor ctc_alignment_nll(const Tensor& log_probs, const Tensor& extended, const std::vector<int64_t>& input_lengths,
                         const std::vector<int64_t>& target_lengths, int64_t blank);

}  // namespace ember
