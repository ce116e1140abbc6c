// Binary elementwise ops with broadcasting and type promotion. Scalar
// operands come in as wrapped-number tensors (scalar_tensor).
#pragma once
#include <optional>
#include <string>

#include <ember/core/tensor.h>

namespace ember {

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
// rounding_mode: none (true division), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string> rounding_mode = std::nullopt);
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value);

}  // namespace ember
