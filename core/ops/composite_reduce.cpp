// Reduction composites (core/ops/composite_reduce.h).
#include <ember/core/ops/composite_reduce.h>

#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/composite_detail.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>

namespace ember {

using composite::as_op;

Tensor count_nonzero(const Tensor& x, const Dims& dims) {
  EMBER_CHECK(x.defined(), ValueError, "count_nonzero: got an undefined tensor");
  dim_mask(dims, x.dim(), "count_nonzero");  // range and repeats, with this op's name
  const Tensor nonzero = ne(x, scalar_tensor(0, x.dtype(), x.device()));
  return sum(nonzero, dims, false, DType::Int64);
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const Dims& dims, double correction, bool keepdim) {
  return as_op("var_mean", [&] {
    return std::make_tuple(var(x, dims, correction, keepdim), mean(x, dims, keepdim));
  });
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& x, const Dims& dims, double correction, bool keepdim) {
  return as_op("std_mean", [&] {
    return std::make_tuple(std_dev(x, dims, correction, keepdim), mean(x, dims, keepdim));
  });
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  EMBER_CHECK(x.defined(), ValueError, "aminmax: got an undefined tensor");
  if (dim) {
    const int64_t d = wrap_dim(*dim, x.dim(), "aminmax");
    EMBER_CHECK(x.dim() == 0 || x.size(d) > 0, Error, "aminmax: cannot compute aminmax over an empty dimension ",
                d, " of shape ", x.shape_str(), " as the operation has no identity");
    return as_op("aminmax", [&] { return std::make_tuple(amin(x, {*dim}, keepdim), amax(x, {*dim}, keepdim)); });
  }
  EMBER_CHECK(x.numel() > 0, Error, "aminmax: cannot compute aminmax of an empty tensor (shape ", x.shape_str(),
              ") as the operation has no identity");
  // All elements: 0-d results, or all dims kept as 1 with keepdim.
  return as_op("aminmax", [&] { return std::make_tuple(amin(x, {}, keepdim), amax(x, {}, keepdim)); });
}

}  // namespace ember
