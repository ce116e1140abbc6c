// The dtype an op computes in, by PyTorch's rules: tensors with dims outrank
// 0-d tensors, which outrank wrapped Python numbers, unless a lower tier is
// of a higher category (bool < integer < floating).
#pragma once
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

DType result_type(const std::vector<Tensor>& operands);
inline DType result_type(const Tensor& a, const Tensor& b) { return result_type(std::vector<Tensor>{a, b}); }

// Checks that all defined operands are on one device and returns it; 0-d
// CPU tensors go with any device (CPU when nothing else decides). The
// message names the op and where each input is.
Device common_device(const char* op, const std::vector<Tensor>& operands);

}  // namespace ember
