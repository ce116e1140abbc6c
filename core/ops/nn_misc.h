// nn ops outside the numbered families: embedding (a row gather with its own
// backward) and dropout (a Bernoulli mask from ember's generator).
#pragma once
#include <optional>

#include <ember/core/tensor.h>

namespace ember {

// Rows of `weight` (num_embeddings, dim) picked by the integer `input`; the
// result has shape input.shape + [dim]. Rows at padding_idx get no gradient;
// scale_grad_by_freq divides each row's gradient by its count in `input`.
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt,
                 bool scale_grad_by_freq = false);
// Zeros each element with probability p and scales the rest by 1 / (1 - p);
// identity when !training. inplace writes into `input`.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true, bool inplace = false);
// Channel-wise dropout: zeros whole (n, c) feature maps of an (N, C, ...) input.
Tensor feature_dropout(const Tensor& input, double p, bool training, bool inplace, const char* op);

}  // namespace ember
