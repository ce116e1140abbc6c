#include <ember/autograd/functions/pool.h>

#include <algorithm>

#include <ember/autograd/grad_mode.h>
#include <ember/core/determinism.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/pool.h>
#include <ember/core/ops/shape.h>
#include <ember/cuda/pool.h>

namespace ember::autograd::functions {

Vjp max_pool_backward(const Shape& input_shape) {
  return [input_shape](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& idx = s[0];
    const int64_t N = input_shape[0], C = input_shape[1];
    // First order on CUDA: one atomic-add kernel, unless the order of the adds
    // must not vary (then scatter_add's sorted, deterministic path).
    if (g[0].device().is_cuda() && !grad_enabled() && !deterministic_algorithms()) {
      Tensor gx = empty(input_shape, g[0].dtype(), g[0].device());
      cuda::max_pool2d_backward(gx, g[0].contiguous(), idx.contiguous(), N * C, input_shape[2] * input_shape[3],
                                idx.numel() / std::max<int64_t>(N * C, 1));
      return TensorList{gx};
    }
    const Tensor flat = zeros({N, C, input_shape[2] * input_shape[3]}, g[0].dtype(), g[0].device());
    const Tensor gx = scatter_add(flat, 2, reshape(idx, {N, C, -1}), reshape(g[0], {N, C, -1}));
    return TensorList{reshape(gx, input_shape)};
  };
}

Vjp avg_pool_backward(const cpu::PoolGeom& geom) {
  return [geom](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{pool_detail::avg_adjoint(g[0], geom)};
  };
}

Vjp avg_pool_adjoint_backward(const cpu::PoolGeom& geom) {
  return [geom](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{pool_detail::avg(g[0], geom)};
  };
}

}  // namespace ember::autograd::functions
