// CPU kernels for softmax / log_softmax over the middle axis of a contiguous
// [outer, n, inner] block (float32 or float64).
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

void softmax(Tensor& out, const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log);

// The first-order backward over the last axis of contiguous [rows, n] g and y
// (the forward's output), one pass per row: gx = y * (g - sum(g * y)) for
// softmax, gx = g - exp(y) * sum(g) for log_softmax.
void softmax_backward_last_dim(Tensor& gx, const Tensor& g, const Tensor& y, int64_t rows, int64_t n, bool log);

}  // namespace ember::cpu
