// Reductions over all or some dims. Empty `dims` means every dim.
#pragma once
#include <optional>
#include <tuple>

#include <ember/core/tensor.h>

namespace ember {

Tensor sum(const Tensor& x, const Dims& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, const Dims& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
// Sums a broadcast gradient back down to `shape` (the inverse of expand).
Tensor sum_to(const Tensor& x, const Shape& shape);

}  // namespace ember
