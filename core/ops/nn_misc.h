// nn ops outside the numbered families: embedding (a row gather with its own
// backward) and dropout (a Bernoulli mask from ember's generator, drawn and
// applied in one fused pass).
#pragma once
#include <optional>
#include <tuple>

#include <ember/core/tensor.h>

namespace ember {

// Rows of `weight` (num_embeddings, dim) picked by the integer `input`; the
// result has shape input.shape + [dim]. Rows at padding_idx get no gradient;
// scale_grad_by_freq divides each row's gradient by its count in `input`.
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt,
                 bool scale_grad_by_freq = false);
// torch.native_dropout: (output, mask). In training (train true or unset)
// each element is kept with probability 1 - p, drawn from the device's default
// generator; output = input * mask / (1 - p) (0 where dropped; all zeros for
// p == 1), mask a bool tensor of input's shape. train false: (a copy of
// input, all-true mask). One kernel pass; the grad is native_dropout_backward.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train = true);
// grad * mask * scale in one pass (mask bool, broadcast to grad), the backward
// of native_dropout (scale = 1 / (1 - p), 0 for p == 1) and its own backward.
Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale);
// Zeros each element with probability p and scales the rest by 1 / (1 - p)
// (native_dropout's output); identity when !training or p == 0. inplace
// writes into `input`.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true, bool inplace = false);
// Channel-wise dropout: zeros whole (n, c) feature maps of an (N, C, ...) input.
Tensor feature_dropout(const Tensor& input, double p, bool training, bool inplace, const char* op);

}  // namespace ember
