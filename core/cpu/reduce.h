// CPU kernels for reductions. The front-end lays the input out as a
// contiguous [outer, reduced, inner] block; kernels reduce the middle axis.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

enum class ReduceOp { Sum, Mean };

namespace cpu {

// out[o, i] = op over r of x[o, r, i]; x contiguous, out contiguous with outer*inner elements.
void reduce(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);

}  // namespace cpu
}  // namespace ember
