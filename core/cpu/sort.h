// CPU kernels of the sort family over the rows of a contiguous [rows, n]
// block (the front-end moves the sorted dim last). Element order is PyTorch's:
// NaN sorts above every number, equal elements keep their input order (the
// sort is always stable), -0.0 equals 0.0. Inputs are bool, integer, float32
// or float64 (the front-end computes float16/bfloat16 in float32); indices are
// int64 positions within the row.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// values, indices: [rows, n].
void sort(Tensor& values, Tensor& indices, const Tensor& x, int64_t rows, int64_t n, bool descending);
// values, indices: [rows, k], the first k of each row's stable sort (largest
// first when `largest`), without sorting the whole row.
void topk(Tensor& values, Tensor& indices, const Tensor& x, int64_t rows, int64_t n, int64_t k, bool largest);

}  // namespace ember::cpu
