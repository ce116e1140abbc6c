// softmax and log_softmax along one dim. `dtype` casts the input first.
#pragma once
#include <optional>

#include <ember/core/tensor.h>

namespace ember {

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

}  // namespace ember
