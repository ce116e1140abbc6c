// CPU kernels of the index family. The front-ends (core/ops/index*.cpp)
// restride every operand over one iteration shape, so two kernels serve
// gather, index_select, advanced indexing, scatter, index_add and index_put.
#pragma once
#include <utility>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::cpu {

// out[p] = src[p + sum_k wrap(idx_k[p]) * index_strides[k]] over out's shape.
// src and the int64 indices are strided views with out's shape; wrap() adds
// sizes[k] to negative values when negatives_wrap. Each value is checked as it
// is read: false when one lay outside [0, sizes[k]) ([-sizes[k], sizes[k])
// when negatives wrap). Such a value reads nothing outside src, but out is
// then partly wrong, and the caller raises.
bool index_gather(Tensor& out, const Tensor& src, const std::vector<Tensor>& indices,
                  const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes,
                  bool negatives_wrap = true);
// out = x.index_select(dim, index) for contiguous x, out and index, whose
// values were checked to lie in [0, x.size(dim)): one copy per block of the
// dims after dim (the general gather's per-row walk cost more than the copy
// for short rows).
void index_select_blocks(Tensor& out, const Tensor& x, int64_t dim, const Tensor& index);
// dst[p + sum_k ...] = values[p] (or += when accumulate), over values' shape.
void index_scatter(Tensor& dst, const Tensor& values, const std::vector<Tensor>& indices,
                   const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes,
                   bool accumulate);
// Throws "<op>: index v is out of bounds for dimension dim with size n" for
// the first value outside [0, n) ([-n, n) when allow_negative): an IndexError,
// or a RuntimeError for gather/scatter, where PyTorch raises that.
enum class RangeError { Index, Runtime };
void check_index_range(const Tensor& index, int64_t size, int64_t dim, const char* op, bool allow_negative,
                       RangeError kind = RangeError::Index);
// Smallest and largest value of a non-empty int64 tensor.
std::pair<int64_t, int64_t> min_max(const Tensor& index);
int64_t count_nonzero(const Tensor& x);
// int64 [count_nonzero(x), x.dim()]: the coordinates of x's nonzero elements
// in row-major order (a contiguous x is counted and written on all threads).
Tensor nonzero(const Tensor& x);
// x's rows where `mask` is true, in order: mask (bool) covers x's leading
// mask.dim() dims; the result is [count, x.shape[mask.dim():]...]. Both
// contiguous; what x.index({mask}) gives, in one pass over each.
Tensor masked_rows(const Tensor& x, const Tensor& mask);

}  // namespace ember::cpu
