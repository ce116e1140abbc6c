// CUDA softmax / log_softmax over the middle axis of a contiguous
// [outer, n, inner] block (float32 or float64), as core/cpu/softmax.h.
// The backward is composed of ember ops by the autograd formulas, which run
// on the GPU through the elementwise and reduction kernels.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

void softmax(Tensor& out, const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log);

}  // namespace ember::cuda
