// CPU kernels for softmax / log_softmax over the middle axis of a contiguous
// [outer, n, inner] block (float32 or float64).
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

void softmax(Tensor& out, const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log);

}  // namespace ember::cpu
