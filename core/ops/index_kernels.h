// The index family's kernels for the device of their operands: cuda::
// (cuda/index.h) for CUDA tensors, cpu:: (core/cpu/index.h) otherwise. Used by
// the index, advanced-indexing, join and shape front-ends.
#pragma once
#include <utility>
#include <vector>

#include <ember/core/cpu/index.h>
#include <ember/core/tensor.h>
#include <ember/cuda/index.h>

namespace ember::index_kernels {

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

inline std::pair<int64_t, int64_t> min_max(const Tensor& index) {
  return index.device().is_cuda() ? cuda::min_max(index) : cpu::min_max(index);
}

}  // namespace ember::index_kernels
