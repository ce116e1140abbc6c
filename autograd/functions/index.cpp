#include <ember/autograd/functions/index.h>

#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>

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

Vjp scatter_backward(int64_t dim, const Tensor& index) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    TensorList out(need.size());
    if (need[0]) out[0] = scatter(g[0], dim, index, Scalar(0.0));
    if (need.size() > 1 && need[1]) out[1] = gather(g[0], dim, index);
    return out;
  };
}

Vjp scatter_add_backward(int64_t dim, const Tensor& index) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    return TensorList{g[0], need[1] ? gather(g[0], dim, index) : Tensor()};
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
