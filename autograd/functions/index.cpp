#include <ember/autograd/functions/index.h>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/shape.h>

namespace ember::autograd::functions {

Vjp index_select_backward(const Shape& in_shape, int64_t dim, const Tensor& index) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    const Tensor z = zeros(in_shape, g[0].dtype(), g[0].device());
    if (in_shape.empty()) return TensorList{index_add(z, dim, index, g[0].reshape({}))};
    return TensorList{index_add(z, dim, index, g[0])};
  };
}

Vjp gather_backward(const Shape& in_shape, int64_t dim, const Tensor& index) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{scatter_add(zeros(in_shape, g[0].dtype(), g[0].device()), dim, index, g[0])};
  };
}

namespace {
// src's gradient: g gathered at index, zero-padded where src is larger than index.
Tensor src_grad(const Tensor& g, int64_t dim, const Tensor& index, const Shape& src_shape) {
  Tensor out = gather(g, dim, index);
  for (int64_t k = 0; k < out.dim() && k < static_cast<int64_t>(src_shape.size()); ++k) {
    if (out.size(k) < src_shape[k]) {
      Shape pad = out.shape();
      pad[k] = src_shape[k] - out.size(k);
      out = cat({out, zeros(pad, out.dtype(), out.device())}, k);
    }
  }
  return out;
}
}  // namespace

Vjp scatter_backward(int64_t dim, const Tensor& index, const Shape& src_shape) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    TensorList out(need.size());
    if (need[0]) out[0] = scatter(g[0], dim, index, Scalar(0.0));
    if (need.size() > 1 && need[1]) out[1] = src_grad(g[0], dim, index, src_shape);
    return out;
  };
}

Vjp scatter_add_backward(int64_t dim, const Tensor& index, const Shape& src_shape) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    return TensorList{g[0], need[1] ? src_grad(g[0], dim, index, src_shape) : Tensor()};
  };
}

Vjp index_add_backward(int64_t dim, const Tensor& index, const Scalar& alpha) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    Tensor gs;
    if (need[1]) {
      gs = index_select(g[0], dim, index);
      if (alpha.to_double() != 1.0) gs = mul(gs, scalar_tensor(alpha));
    }
    return TensorList{g[0], gs};
  };
}

Vjp index_backward(const Shape& in_shape, const IndexList& indices) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{index_put(zeros(in_shape, g[0].dtype(), g[0].device()), indices, g[0], true)};
  };
}

Vjp index_put_backward(const IndexList& indices, bool accumulate) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    TensorList out(2);
    if (need[0]) out[0] = accumulate ? g[0] : index_put(g[0], indices, zeros({}, g[0].dtype(), g[0].device()));
    if (need[1]) out[1] = index(g[0], indices);
    return out;
  };
}

}  // namespace ember::autograd::functions
