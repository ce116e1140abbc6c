// CPU kernels of the shape family that are not plain copies.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// out = x with the elements above (lower) or below (!lower) the diagonal
// `diagonal` of the last two dims set to zero. out is contiguous, x any layout.
void tril_triu(Tensor& out, const Tensor& x, int64_t diagonal, bool lower);

}  // namespace ember::cpu
