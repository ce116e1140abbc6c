// The pool family: max/avg pooling (1-D and 2-D, fixed and adaptive windows)
// with PyTorch's arguments and output sizes. Inputs are [N, C, ...] or
// unbatched [C, ...]. A stride of {} means stride = kernel_size.
#pragma once
#include <optional>
#include <tuple>
#include <vector>

#include <ember/core/cpu/pool.h>
#include <ember/core/tensor.h>

namespace ember {

using IntList = std::vector<int64_t>;

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const IntList& kernel_size,
                                                   const IntList& stride = {}, const IntList& padding = {0},
                                                   const IntList& dilation = {1}, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = {0}, const IntList& dilation = {1}, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const IntList& kernel_size,
                                                   const IntList& stride = {}, const IntList& padding = {0},
                                                   const IntList& dilation = {1}, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool1d(const Tensor& input, const IntList& kernel_size, const IntList& stride = {},
                  const IntList& padding = {0}, bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& input, const IntList& output_size);
Tensor adaptive_avg_pool1d(const Tensor& input, const IntList& output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, const IntList& output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, const IntList& output_size);

namespace pool_detail {
// Averaging (fixed or adaptive) of batched [N, C, H, W] x, and its adjoint
// (from [N, C, OH, OW] back to [N, C, H, W]); each is the other's backward.
Tensor avg(const Tensor& x, const cpu::PoolGeom& g);
Tensor avg_adjoint(const Tensor& gy, const cpu::PoolGeom& g);
}  // namespace pool_detail

}  // namespace ember
