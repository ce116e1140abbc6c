// Binary elementwise ops with broadcasting and type promotion, plus the
// family's ternary selects (where, lerp, masked_fill). Scalar operands come
// in as wrapped-number tensors (scalar_tensor). On bool tensors add is
// logical or and mul logical and, as in PyTorch.
#pragma once
#include <optional>
#include <string>

#include <ember/core/tensor.h>

namespace ember {

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
// rounding_mode: none (true division), "trunc" or "floor".
// "trunc" and "floor" keep integer dtypes, like PyTorch.
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string> rounding_mode = std::nullopt);
Tensor floor_divide(const Tensor& a, const Tensor& b);
// Python's %: the result takes the sign of b.
Tensor remainder(const Tensor& a, const Tensor& b);
// NaN-propagating elementwise max / min.
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// Comparisons and logical ops return bool tensors.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
// PyTorch's torch.equal: the same shape (no broadcasting) and equal elements
// after type promotion; NaN is never equal. Tensors on different devices raise.
bool equal(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
// Integer and bool tensors only (bool: the logical op).
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_not(const Tensor& a);
// cond (bool) ? a : b, with a and b promoted like a binary op.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// start + weight * (end - start); weight is a tensor or a wrapped number.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
// a with value written where mask (bool) is true; value is a number or a
// 0-d tensor, cast to a's dtype.
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value);

}  // namespace ember
