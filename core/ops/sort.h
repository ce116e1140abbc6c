// The sort family: sort, argsort, topk, msort, with PyTorch's semantics.
// NaN sorts above every number (last ascending, first descending); equal
// elements keep their input order on every device, so `stable` is always
// honoured (it is accepted for PyTorch's signature). Indices are int64.
#pragma once
#include <tuple>

#include <ember/core/tensor.h>

namespace ember {

// (values, indices) of x sorted along dim.
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
// The indices of sort(x, dim, descending).
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
// (values, indices) of the k largest (or smallest) elements along dim, in
// sorted order (also when sorted = false; ties keep their input order).
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
// sort(x, 0)'s values.
Tensor msort(const Tensor& x);
// For each value, where it would go in the sorted last dim of
// sorted_sequence (1-D, or with values' leading dims): the number of elements
// below it (below or equal with `right`); NaN goes after everything. int64,
// values' shape; the two are compared in their promoted dtype. A binary
// search per value on the CPU; CUDA inputs take a round trip through the host.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right = false);

}  // namespace ember
