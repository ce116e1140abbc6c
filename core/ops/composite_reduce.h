// Reduction composites: count_nonzero, var_mean/std_mean and aminmax, built
// of ne/sum, var/std/mean and amin/amax (every device, differentiable where
// PyTorch's are).
#pragma once
#include <optional>
#include <tuple>

#include <ember/core/tensor.h>

namespace ember {

// The number of non-zero elements over dims (empty: all), as int64.
Tensor count_nonzero(const Tensor& x, const Dims& dims = {});
// (var, mean) and (std, mean) over dims (empty: all), var with `correction`.
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const Dims& dims = {}, double correction = 1,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, const Dims& dims = {}, double correction = 1,
                                    bool keepdim = false);
// (min, max) over all elements or along dim.
std::tuple<Tensor, Tensor> aminmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

}  // namespace ember
