// The norm family: batch, layer, group and RMS normalization, as in
// torch.nn.functional. Optional tensors (weight, bias, running stats) are
// passed undefined when absent.
#pragma once
#include <optional>

#include <ember/core/tensor.h>

namespace ember {

// Training mode normalizes with the batch statistics over (N, spatial) and
// updates running_mean / running_var in place (unbiased variance) when given.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = {}, const Tensor& bias = {}, bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
// eps defaults to the machine epsilon of the input's dtype, like torch.
Tensor rms_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);

}  // namespace ember
