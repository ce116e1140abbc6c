// CUDA kernels of the index family (cuda/index.cu), with the contracts of
// core/cpu/index.h and core/cpu/shape.h's tril_triu: the front-ends restride
// every operand over one iteration shape and call the kernels of the
// operands' device. No CUDA headers here; a CPU-only build links
// cuda/no_cuda_index.cpp instead.
#pragma once
#include <utility>
#include <vector>

#include <ember/core/cpu/index.h>
#include <ember/core/tensor.h>

namespace ember::cuda {

// out[p] = src[p + sum_k wrap(idx_k[p]) * index_strides[k]] over out's shape
// (as cpu::index_gather; src may have negative strides, as flip's view has).
void index_gather(Tensor& out, const Tensor& src, const std::vector<Tensor>& indices,
                  const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes);
// dst[p + sum_k ...] = values[p] (atomically += when accumulate), over
// values' shape. Duplicate targets without accumulate: one of the values wins,
// in no fixed order (as in PyTorch). accumulate takes float32/float64/
// float16/bfloat16/int32/int64 (and bool, as a logical or); other dtypes raise
// NotImplementedError naming `op`.
void index_scatter(Tensor& dst, const Tensor& values, const std::vector<Tensor>& indices,
                   const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes, bool accumulate,
                   const char* op = "index_put_");
// cpu::check_index_range's errors and messages, for an int64 index on a GPU:
// the index's min and max are read back to the host (a synchronization).
void check_index_range(const Tensor& index, int64_t size, int64_t dim, const char* op, bool allow_negative,
                       cpu::RangeError kind = cpu::RangeError::Index);
// Smallest and largest value of a non-empty int64 tensor (read back: a synchronization).
std::pair<int64_t, int64_t> min_max(const Tensor& index);
int64_t count_nonzero(const Tensor& x);
// The int64 [count_nonzero(x), x.dim()] coordinates of x's nonzero elements
// in row-major order. Unlike cpu::nonzero it allocates the result: the count
// (read back, a synchronization) comes out of the pass that orders them.
Tensor nonzero(const Tensor& x);
// cpu::tril_triu: out contiguous, x any layout.
void tril_triu(Tensor& out, const Tensor& x, int64_t diagonal, bool lower);

}  // namespace ember::cuda
