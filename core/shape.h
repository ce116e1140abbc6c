// Shapes and strides: numel, contiguous strides, broadcasting, dim wrapping.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Strides contiguous_strides(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3]"

// PyTorch's broadcasting of two shapes; throws naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// Turns a possibly negative dim into [0, ndim); throws IndexError naming `op`.
// A 0-d tensor accepts dims -1 and 0, as in PyTorch.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

// Dims to reduce over: empty `dims` means all of them. Returns a mask of ndim bools.
std::vector<bool> dim_mask(const std::vector<int64_t>& dims, int64_t ndim, const char* op);

}  // namespace ember
