// Backward formulas of the softmax family, from the saved output y (which
// keeps its history, so double backward works). First order on the CPU over a
// contiguous last dim runs as one fused kernel (core/cpu/softmax.h).
#include <ember/autograd/functions/softmax.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/cpu/softmax.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/unary.h>

namespace ember::autograd::functions {

namespace {

// The fused CPU kernel's result, or an undefined tensor where it does not apply.
Tensor fused_backward(const Tensor& g, const Tensor& y, int64_t dim, bool log) {
  const bool applies = !grad_enabled() && y.device().is_cpu() && g.dtype() == y.dtype() &&
                       (y.dtype() == DType::Float32 || y.dtype() == DType::Float64) && y.dim() > 0 &&
                       (dim == y.dim() - 1 || dim == -1) && y.numel() > 0;
  if (!applies) return Tensor();
  const Tensor gc = g.contiguous(), yc = y.contiguous();
  const int64_t n = y.size(-1);
  Tensor gx = empty(y.shape(), y.dtype(), y.device());
  cpu::softmax_backward_last_dim(gx, gc, yc, y.numel() / n, n, log);
  return gx;
}

}  // namespace

Vjp softmax_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    const Tensor& y = s[0];
    if (Tensor fused = fused_backward(g[0], y, dim, false); fused.defined()) return TensorList{fused};
    return TensorList{mul(y, sub(g[0], sum(mul(g[0], y), {dim}, /*keepdim=*/true)))};
  };
}

Vjp log_softmax_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
    if (Tensor fused = fused_backward(g[0], s[0], dim, true); fused.defined()) return TensorList{fused};
    const Tensor p = exp(s[0]);  // softmax(x)
    return TensorList{sub(g[0], mul(p, sum(g[0], {dim}, /*keepdim=*/true)))};
  };
}

}  // namespace ember::autograd::functions
