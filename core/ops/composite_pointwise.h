// Pointwise composites, built of the binary and unary ops (every device,
// differentiable): addcmul/addcdiv (and in place), logit, cross products,
// and the logspace factory.
#pragma once
#include <optional>

#include <ember/core/tensor.h>

namespace ember {

// input + value * tensor1 * tensor2, broadcast.
Tensor addcmul(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
// input + value * tensor1 / tensor2 (true division; two integer tensors are refused, as PyTorch).
Tensor addcdiv(const Tensor& input, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor& addcmul_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor& addcdiv_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);

// log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given (and >= 0).
Tensor logit(const Tensor& x, std::optional<double> eps = std::nullopt);
Tensor& logit_(Tensor& self, std::optional<double> eps = std::nullopt);  // floating self only

// The cross product of 3-vectors along dim (inputs of equal ndim, broadcast): torch.linalg.cross.
Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim = -1);
// torch.cross: without dim, the first dim of size 3 of the broadcast shape.
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = std::nullopt);

// base ** linspace(start, end, steps), computed in float64, then cast to dtype.
Tensor logspace(double start, double end, int64_t steps, double base = 10.0, std::optional<DType> dtype = std::nullopt,
                Device device = kCPU);

}  // namespace ember
