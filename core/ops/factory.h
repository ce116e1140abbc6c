// Creation functions: zeros, ones, full, arange, linspace, eye and *_like,
// with PyTorch's dtype inference.
#pragma once
#include <optional>

#include <ember/core/tensor.h>

namespace ember {

// Throws RuntimeError naming `op` when a size is negative, like torch.
void check_size_nonnegative(const Shape& shape, const char* op);

Tensor zeros(const Shape& shape, DType dtype = DType::Float32, Device device = kCPU);
Tensor ones(const Shape& shape, DType dtype = DType::Float32, Device device = kCPU);
// dtype defaults to the value's: bool, int64 or the default float dtype.
Tensor full(const Shape& shape, const Scalar& value, std::optional<DType> dtype = std::nullopt,
            Device device = kCPU);
Tensor empty_like(const Tensor& t, std::optional<DType> dtype = std::nullopt);
Tensor zeros_like(const Tensor& t, std::optional<DType> dtype = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<DType> dtype = std::nullopt);
Tensor full_like(const Tensor& t, const Scalar& value, std::optional<DType> dtype = std::nullopt);
// dtype defaults to int64 when start, end and step are all integers, else the default float.
// Length ceil((end - start) / step), computed in double as torch does.
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              std::optional<DType> dtype = std::nullopt, Device device = kCPU);
Tensor linspace(double start, double end, int64_t steps, std::optional<DType> dtype = std::nullopt,
                Device device = kCPU);
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dtype = DType::Float32,
           Device device = kCPU);

}  // namespace ember
