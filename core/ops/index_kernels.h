// The index family's kernels for the device of their operands: cuda::
// (cuda/index.h) for CUDA tensors, cpu:: (core/cpu/index.h) otherwise. Used by
// the index, advanced-indexing, join and shape front-ends.
#pragma once
#include <utility>
#include <vector>

#include <ember/core/cpu/index.h>
#include <ember/core/error.h>
#include <ember/core/tensor.h>
#include <ember/cuda/index.h>

namespace ember::index_kernels {

// For indices already checked to be in range (negative values wrap).
inline void gather(Tensor& out, const Tensor& src, const std::vector<Tensor>& indices,
                   const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes) {
  if (out.device().is_cuda()) cuda::index_gather(out, src, indices, index_strides, sizes);
  else cpu::index_gather(out, src, indices, index_strides, sizes);
}

// `op` names the op in CUDA's refusal of a dtype it cannot accumulate.
inline void scatter(Tensor& dst, const Tensor& values, const std::vector<Tensor>& indices,
                    const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes, bool accumulate,
                    const char* op) {
  if (dst.device().is_cuda()) cuda::index_scatter(dst, values, indices, index_strides, sizes, accumulate, op);
  else cpu::index_scatter(dst, values, indices, index_strides, sizes, accumulate);
}

inline void check_range(const Tensor& index, int64_t size, int64_t dim, const char* op, bool allow_negative,
                        cpu::RangeError kind = cpu::RangeError::Index) {
  if (index.device().is_cuda()) cuda::check_index_range(index, size, dim, op, allow_negative, kind);
  else cpu::check_index_range(index, size, dim, op, allow_negative, kind);
}

// gather with one unchecked index whose values must lie in [0, size): the
// CPU kernel checks them as it reads them, which saves a pass over an index
// as large as the output; on a GPU, check_range runs first. Out-of-range
// values raise check_range's error for op.
inline void gather_checked(Tensor& out, const Tensor& src, const Tensor& index, int64_t index_stride, int64_t size,
                           int64_t dim, const char* op, cpu::RangeError kind) {
  if (out.device().is_cuda() || size == 0) {  // size 0: not even element 0 may be read in place of a bad index
    check_range(index, size, dim, op, false, kind);
    if (out.device().is_cuda()) cuda::index_gather(out, src, {index}, {index_stride}, {size});
    return;
  }
  if (cpu::index_gather(out, src, {index}, {index_stride}, {size}, false)) return;
  check_range(index, size, dim, op, false, kind);
  throw Error(str(op, ": internal error: the gather found an index out of range that the check did not"));
}

inline std::pair<int64_t, int64_t> min_max(const Tensor& index) {
  return index.device().is_cuda() ? cuda::min_max(index) : cpu::min_max(index);
}

}  // namespace ember::index_kernels
