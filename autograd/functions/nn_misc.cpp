// Backward of embedding and dropout, written with ember ops so double backward works.
#include <ember/autograd/functions/nn_misc.h>

#include <ember/autograd/grad_mode.h>

#include <ember/core/determinism.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/nn_misc.h>
#include <ember/core/ops/shape.h>
#include <ember/cuda/nn_misc.h>

namespace ember::autograd::functions {

Vjp embedding_backward(const Shape& weight_shape, const Tensor& indices, std::optional<int64_t> padding_idx,
                       bool scale_grad_by_freq) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    const int64_t rows = weight_shape[0], dim = weight_shape[1];
    Tensor grad_rows = g[0].reshape({indices.numel(), dim});
    if (padding_idx) {
      const Tensor keep = ne(indices, full({}, *padding_idx, DType::Int64, indices.device()));
      grad_rows = mul(grad_rows, unsqueeze(keep.to(grad_rows.dtype()), 1));
    }
    if (scale_grad_by_freq) {
      const Tensor ones_n = ones({indices.numel()}, grad_rows.dtype(), grad_rows.device());
      const Tensor counts = index_add(zeros({rows}, grad_rows.dtype(), grad_rows.device()), 0, indices, ones_n);
      grad_rows = div(grad_rows, unsqueeze(index_select(counts, 0, indices), 1));
    }
    // First order on CUDA: one atomic-add kernel, unless the order of the adds
    // must not vary (then index_add's sorted, deterministic path).
    if (grad_rows.device().is_cuda() && !grad_enabled() && !deterministic_algorithms()) {
      Tensor gw = empty(weight_shape, grad_rows.dtype(), grad_rows.device());
      cuda::embedding_backward(gw, grad_rows.contiguous(), indices);
      return TensorList{gw};
    }
    const Tensor z = zeros(weight_shape, grad_rows.dtype(), grad_rows.device());
    return TensorList{index_add(z, 0, indices, grad_rows)};
  };
}

Vjp native_dropout_backward(double scale) {
  return [scale](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    return TensorList{ember::native_dropout_backward(g[0], s[0], scale)};
  };
}

}  // namespace ember::autograd::functions
