// Reductions: layout as [outer, reduced, inner], kernel call, autograd node.
#include <ember/core/ops/reduce.h>

#include <ember/autograd/node.h>
#include <ember/core/cpu/reduce.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/shape.h>

namespace ember {

using autograd::TensorList;

namespace {

struct Layout {
  Tensor input;        // contiguous, viewable as [outer, reduced, inner]
  int64_t outer = 1, reduced = 1, inner = 1;
  Shape out_shape;      // result shape (keepdim applied)
  Shape keep_shape;     // result shape with reduced dims kept as 1
};

// Arranges x so the reduced dims form one contiguous middle block.
Layout layout_for(const Tensor& x, const Dims& dims, bool keepdim, const char* op) {
  const int64_t nd = x.dim();
  const auto mask = dim_mask(dims, nd, op);
  Layout l;
  Dims kept, red;
  for (int64_t d = 0; d < nd; ++d) {
    (mask[d] ? red : kept).push_back(d);
    l.keep_shape.push_back(mask[d] ? 1 : x.shape()[d]);
    if (!mask[d] || keepdim) l.out_shape.push_back(mask[d] ? 1 : x.shape()[d]);
  }
  // Is the reduced set one run of adjacent dims?
  bool block = true;
  for (size_t i = 1; i < red.size(); ++i) block = block && red[i] == red[i - 1] + 1;
  if (red.empty()) {
    l.input = x.contiguous();
    l.outer = x.numel();
    return l;
  }
  if (block) {
    l.input = x.contiguous();
    for (int64_t d = 0; d < nd; ++d) {
      const int64_t s = x.shape()[d];
      if (d < red.front()) l.outer *= s;
      else if (d <= red.back()) l.reduced *= s;
      else l.inner *= s;
    }
  } else {
    Dims order = kept;
    order.insert(order.end(), red.begin(), red.end());
    l.input = permute(x.detach(), order).contiguous();
    for (auto d : kept) l.outer *= x.shape()[d];
    for (auto d : red) l.reduced *= x.shape()[d];
  }
  return l;
}

Tensor run_reduce(ReduceOp op, const char* name, const Tensor& x, const Dims& dims, bool keepdim, DType out_dtype) {
  Layout l = layout_for(x, dims, keepdim, name);
  const DType compute = is_half(out_dtype) ? DType::Float32 : out_dtype;
  Tensor in = l.input.dtype() == compute ? l.input : l.input.detach().to(compute);
  Tensor out = empty(l.out_shape, compute, x.device());
  EMBER_CHECK(x.device().is_cpu(), NotImplementedError, name, ": only the CPU is supported in this build");
  cpu::reduce(op, out, in, l.outer, l.reduced, l.inner);
  return compute == out_dtype ? out : out.to(out_dtype);
}

// Gradient of a reduction to x's shape: g with reduced dims restored, broadcast.
Tensor expand_back(const Tensor& g, const Shape& keep_shape, const Shape& in_shape) {
  return expand(reshape(g, keep_shape), in_shape);
}

}  // namespace

Tensor sum(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  const DType dt = dtype.value_or(is_floating(x.dtype()) ? x.dtype() : DType::Int64);
  Tensor out = run_reduce(ReduceOp::Sum, "sum", x, dims, keepdim, dt);
  if (is_floating(dt) && autograd::any_requires_grad({x})) {
    const Shape in_shape = x.shape();
    const Shape keep = layout_for(x, dims, true, "sum").keep_shape;
    const DType in_dtype = x.dtype();
    autograd::record("SumBackward0", {x}, {out}, {},
                     [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
                       return TensorList{expand_back(g[0], keep, in_shape).to(in_dtype)};
                     });
  }
  return out;
}

Tensor mean(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  const DType dt = dtype.value_or(x.dtype());
  EMBER_CHECK(is_floating(dt), Error, "mean: could not infer output dtype. Input dtype must be a floating point "
              "dtype, got ", dtype_name(dt), "; convert with .float() first");
  Tensor out = run_reduce(ReduceOp::Mean, "mean", x, dims, keepdim, dt);
  if (autograd::any_requires_grad({x})) {
    const Shape in_shape = x.shape();
    const Layout l = layout_for(x, dims, true, "mean");
    const Shape keep = l.keep_shape;
    const double scale = l.reduced ? 1.0 / static_cast<double>(l.reduced) : 0.0;
    const DType in_dtype = x.dtype();
    autograd::record("MeanBackward0", {x}, {out}, {},
                     [=](const TensorList& g, const TensorList&, const std::vector<bool>&) {
                       return TensorList{mul(expand_back(g[0], keep, in_shape), scalar_tensor(scale)).to(in_dtype)};
                     });
  }
  return out;
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  EMBER_CHECK(lead >= 0, Error, "sum_to: shape ", shape_str(x.shape()), " cannot be summed to ", shape_str(shape));
  Dims dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < lead || (shape[d - lead] == 1 && x.shape()[d] != 1)) dims.push_back(d);
  }
  if (dims.empty()) return reshape(x, shape);
  return reshape(sum(x, dims, /*keepdim=*/true), shape);
}

Tensor Tensor::sum(const Dims& dims, bool keepdim, std::optional<DType> dtype) const {
  return ember::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean(const Dims& dims, bool keepdim, std::optional<DType> dtype) const {
  return ember::mean(*this, dims, keepdim, dtype);
}

}  // namespace ember
