#include <ember/autograd/functions/shape.h>

#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>

namespace ember::autograd::functions {

Vjp reshape_backward(const Shape& in_shape) {
  return [in_shape](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{reshape(g[0], in_shape)};
  };
}

Vjp expand_backward(const Shape& in_shape) {
  return [in_shape](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{sum_to(g[0], in_shape)};
  };
}

Vjp permute_backward(const Dims& dims) {
  Dims inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[dims[i]] = static_cast<int64_t>(i);
  return [inverse](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{permute(g[0], inverse)};
  };
}

Vjp select_backward(const Shape& in_shape, int64_t dim, int64_t index) {
  return [in_shape, dim, index](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{ember::select_backward(g[0], in_shape, dim, index)};
  };
}

Vjp slice_backward(const Shape& in_shape, int64_t dim, int64_t start, int64_t step, int64_t length) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    const int64_t end = length > 0 ? start + (length - 1) * step + 1 : start;
    return TensorList{ember::slice_backward(g[0], in_shape, dim, start, end, step)};
  };
}

Vjp flip_backward(const Dims& dims) {
  return [dims](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{flip(g[0], dims)};
  };
}

Vjp tril_triu_backward(int64_t diagonal, bool lower) {
  return [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{lower ? tril(g[0], diagonal) : triu(g[0], diagonal)};
  };
}

Vjp split_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{cat(g, dim)};
  };
}

Vjp unbind_backward(int64_t dim) {
  return [dim](const TensorList& g, const TensorList&, const std::vector<bool>&) {
    return TensorList{stack(g, dim)};
  };
}

Vjp cat_backward(int64_t dim, const std::vector<int64_t>& sizes) {
  return [dim, sizes](const TensorList& g, const TensorList&, const std::vector<bool>& need) {
    TensorList out(sizes.size());
    int64_t offset = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      // Inputs cat skipped (1-D empty, marked -1) get an empty gradient.
      if (sizes[i] < 0) {
        if (need[i]) out[i] = zeros({0}, g[0].dtype(), g[0].device());
        continue;
      }
      if (need[i]) out[i] = narrow(g[0], dim, offset, sizes[i]);
      offset += sizes[i];
    }
    return out;
  };
}

}  // namespace ember::autograd::functions
