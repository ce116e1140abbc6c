// CUDA sort over the rows of a contiguous [rows, n] block, as core/cpu/sort.h:
// stable, NaN above every number, -0.0 equal to 0.0; every dtype (half types
// compared through float). values like x, indices int64. topk on the GPU is
// this sort's first k columns (core/ops/sort.cpp).
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

void sort(Tensor& values, Tensor& indices, const Tensor& x, int64_t rows, int64_t n, bool descending);

}  // namespace ember::cuda
