// Running (cumulative) reductions along a dim other than the sum:
// cumprod, cummax / cummin (with the index of each running extreme) and
// logcumsumexp. Kernels take x contiguous as [outer, length, inner] in the
// compute dtype (float32/float64, or int64 for integer products and any
// integer dtype for max/min); `indices` is int64 of x's shape for Max/Min and
// undefined otherwise. cumsum stays with the reduce family (core/cpu/reduce.h).
#pragma once
#include <ember/core/tensor.h>

namespace ember {

enum class ScanOp { Prod, Max, Min, LogSumExp };

namespace cpu {

void scan(ScanOp op, Tensor& out, Tensor& indices, const Tensor& x, int64_t outer, int64_t length, int64_t inner);

}  // namespace cpu
}  // namespace ember
