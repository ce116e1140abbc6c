// Running reductions along a dim beyond cumsum (core/ops/reduce.h):
// cumprod, cummax / cummin and logcumsumexp, with their gradients. Kernels
// in core/cpu/scan.cpp and cuda/scan.cu.
#pragma once
#include <optional>
#include <tuple>

#include <ember/core/tensor.h>

namespace ember {

// Integer and bool inputs multiply in int64 (the result's dtype), as cumsum sums.
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
// (values, indices): the running maximum / minimum and where it was found
// (the later of equal elements; a NaN, once seen, stays).
std::tuple<Tensor, Tensor> cummax(const Tensor& x, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& x, int64_t dim);
// log(cumsum(exp(x))) without overflow; floating dtypes.
Tensor logcumsumexp(const Tensor& x, int64_t dim);

}  // namespace ember
