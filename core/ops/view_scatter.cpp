// The inverses of slice and select: slice_scatter / select_scatter (a copy of
// base with src written into one slice or index, as PyTorch's; src is cast to
// base's dtype, as copy_ does), and slice_backward / select_backward (zeros
// of the input's shape with the gradient written in), which the views'
// gradient formulas use. Each writes through a strided view of its output:
// no index tensor, no atomics on the GPU.
#include <algorithm>
#include <functional>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/diagonal.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>

namespace ember {

namespace {

using Window = std::function<Tensor(const Tensor&)>;

// A copy autograd does not see: the op that writes into it records itself.
Tensor fresh_copy(const Tensor& t) {
  autograd::NoGradGuard no_grad;
  return t.clone();
}

// `out` (a fresh tensor holding base's values, or zeros) with src written into
// window(out), recorded as `name` with the gradients (g with the window zeroed,
// window(g)) for (base, src); both are differentiable again.
Tensor scatter_into(const char* name, Tensor out, const Tensor& base, const Tensor& src, const Window& window) {
  {
    autograd::NoGradGuard no_grad;
    Tensor w = window(out);
    EMBER_CHECK(w.shape() == src.shape(), Error, name, ": expected src to have a size equal to the slice of self. ",
                "src size = ", shape_str(src.shape()), ", slice size = ", shape_str(w.shape()));
    w.copy_(src.detach());
  }
  if (autograd::any_requires_grad({base, src})) {
    autograd::record(name, {base, src}, {out}, {},
                     [name, window](const autograd::TensorList& g, const autograd::TensorList&, const std::vector<bool>& need) {
                       autograd::TensorList grads(2);
                       const Tensor part = window(g[0]);
                       if (need[0]) grads[0] = scatter_into(name, fresh_copy(g[0]), g[0], zeros_like(part), window);
                       if (need[1]) grads[1] = part;
                       return grads;
                     });
  }
  return out;
}

Tensor scatter_op(const char* op, const Tensor& base, const Tensor& src, const Window& window) {
  EMBER_CHECK(base.defined() && src.defined(), Error, op, ": expected defined input and src tensors");
  EMBER_CHECK(base.device() == src.device(), Error, op, ": expected src on the input's device ",
              base.device().str(), ", but it is on ", src.device().str());
  return scatter_into(op, fresh_copy(base), base, src, window);
}

// The gradient of a view: zeros of the input's shape, g in the window. Its own
// gradient is window(gg), so double backward works.
Tensor zeros_with(const char* name, const Tensor& g, const Shape& in_shape, const Window& window) {
  return scatter_into(name, zeros(in_shape, g.dtype(), g.device()), Tensor(), g, window);
}

}  // namespace

Tensor slice_scatter(const Tensor& base, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  return scatter_op("slice_scatter", base, src, [=](const Tensor& t) { return slice(t, dim, start, end, step); });
}

Tensor select_scatter(const Tensor& base, const Tensor& src, int64_t dim, int64_t index) {
  return scatter_op("select_scatter", base, src, [=](const Tensor& t) { return select(t, dim, index); });
}

Tensor slice_backward(const Tensor& grad, const Shape& in_shape, int64_t dim, int64_t start, int64_t end,
                      int64_t step) {
  return zeros_with("SliceBackwardBackward0", grad, in_shape,
                    [=](const Tensor& t) { return slice(t, dim, start, end, step); });
}

Tensor select_backward(const Tensor& grad, const Shape& in_shape, int64_t dim, int64_t index) {
  return zeros_with("SelectBackwardBackward0", grad, in_shape,
                    [=](const Tensor& t) { return select(t, dim, index); });
}

Tensor diagonal_backward(const Tensor& grad, const Shape& in_shape, int64_t offset, int64_t dim1, int64_t dim2) {
  return zeros_with("DiagonalBackwardBackward0", grad, in_shape,
                    [=](const Tensor& t) { return diagonal(t, offset, dim1, dim2); });
}

Tensor diag_embed(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  EMBER_CHECK(x.dim() >= 1, Error, "diag_embed: expected a tensor with at least 1 dimension, got a 0-d tensor");
  const int64_t out_dim = x.dim() + 1;
  const int64_t d1 = wrap_dim(dim1, out_dim, "diag_embed");
  const int64_t d2 = wrap_dim(dim2, out_dim, "diag_embed");
  EMBER_CHECK(d1 != d2, Error, "diag_embed: diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t n = x.size(-1) + (offset >= 0 ? offset : -offset);
  // The result's other dims are x's leading ones, in order.
  Shape shape(x.shape().begin(), x.shape().end() - 1);
  const int64_t lo = std::min(d1, d2), hi = std::max(d1, d2);
  shape.insert(shape.begin() + lo, n);
  shape.insert(shape.begin() + hi, n);
  return zeros_with("DiagEmbedBackward0", x, shape, [=](const Tensor& t) { return diagonal(t, offset, d1, d2); });
}

}  // namespace ember
