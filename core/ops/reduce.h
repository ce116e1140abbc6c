// Reductions over all or some dims. Empty `dims` means every dim.
#pragma once
#include <optional>
#include <tuple>

#include <ember/core/cpu/reduce.h>
#include <ember/core/tensor.h>

namespace ember {

// core/ops/reduce.cpp
Tensor sum(const Tensor& x, const Dims& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, const Dims& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
// Integer and bool inputs multiply in int64, like sum.
Tensor prod(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
// max/min of all elements; errors on an empty tensor. NaN propagates.
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
// (values, indices) along `dim`; the index is the first extreme (or NaN).
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
// No dim: the index into the flattened tensor.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// Bool results for every input dtype.
Tensor all(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor any(const Tensor& x, const Dims& dims = {}, bool keepdim = false);
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
// Sums a broadcast gradient back down to `shape` (the inverse of expand).
Tensor sum_to(const Tensor& x, const Shape& shape);

// core/ops/reduce_stats.cpp
Tensor var(const Tensor& x, const Dims& dims = {}, double correction = 1, bool keepdim = false);
// Standard deviation (named std_dev so it cannot be mistaken for namespace std).
Tensor std_dev(const Tensor& x, const Dims& dims = {}, double correction = 1, bool keepdim = false);
// Vector p-norm over dims (all: the Frobenius norm for p = 2).
Tensor norm(const Tensor& x, double p = 2, const Dims& dims = {}, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor logsumexp(const Tensor& x, const Dims& dims, bool keepdim = false);

namespace reduce_detail {
// Pieces of backward formulas that are constants of the input (no autograd):
// elementwise coefficients with a and b broadcast to a's shape, and prod's
// "product of the other elements" along dim (or over everything).
Tensor grad_coeff(GradCoeff kind, const Tensor& a, const Tensor& b, double p = 0);
Tensor prod_others(const Tensor& x, std::optional<int64_t> dim);
}  // namespace reduce_detail

}  // namespace ember
