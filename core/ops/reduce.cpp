// Reductions: layout as [outer, reduced, inner], kernel call, autograd node.
#include <ember/core/ops/reduce.h>

#include <ember/autograd/functions/reduce.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/reduce.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/shape.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

// Result geometry of reducing `dims` of x.
struct ReducedShape {
  Shape out_shape;   // keepdim applied
  Shape keep_shape;  // reduced dims kept as 1
  int64_t count = 1; // elements reduced into each output
  Dims kept, reduced;
};

ReducedShape reduced_shape(const Tensor& x, const Dims& dims, bool keepdim, const char* op) {
  const auto mask = dim_mask(dims, x.dim(), op);
  ReducedShape r;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const int64_t s = x.shape()[d];
    (mask[d] ? r.reduced : r.kept).push_back(d);
    r.keep_shape.push_back(mask[d] ? 1 : s);
    if (!mask[d] || keepdim) r.out_shape.push_back(mask[d] ? 1 : s);
    if (mask[d]) r.count *= s;
  }
  return r;
}

// x laid out contiguous so the reduced dims form the middle of [outer, reduced, inner].
struct Layout {
  Tensor input;
  int64_t outer = 1, reduced = 1, inner = 1;
};

Layout layout_for(const Tensor& x, const ReducedShape& r) {
  Layout l;
  const Dims& red = r.reduced;
  bool block = true;  // the reduced dims are one run of adjacent dims
  for (size_t i = 1; i < red.size(); ++i) block = block && red[i] == red[i - 1] + 1;
  if (red.empty()) {
    l.input = x.contiguous();
    l.outer = x.numel();
  } else if (block) {
    l.input = x.contiguous();
    for (int64_t d = 0; d < x.dim(); ++d) {
      const int64_t s = x.shape()[d];
      if (d < red.front()) l.outer *= s;
      else if (d <= red.back()) l.reduced *= s;
      else l.inner *= s;
    }
  } else {
    Dims order = r.kept;
    order.insert(order.end(), red.begin(), red.end());
    l.input = permute(x.detach(), order).contiguous();
    for (auto d : r.kept) l.outer *= x.shape()[d];
    l.reduced = r.count;
  }
  return l;
}

Tensor run_reduce(ReduceOp op, const char* name, const Tensor& x, const Dims& dims, bool keepdim, DType out_dtype) {
  const ReducedShape r = reduced_shape(x, dims, keepdim, name);
  Layout l = layout_for(x, r);
  const DType compute = is_half(out_dtype) ? DType::Float32 : out_dtype;
  Tensor in = l.input.dtype() == compute ? l.input : l.input.detach().to(compute);
  Tensor out = empty(r.out_shape, compute, x.device());
  EMBER_CHECK(x.device().is_cpu(), NotImplementedError, name, ": only the CPU is supported in this build");
  cpu::reduce(op, out, in, l.outer, l.reduced, l.inner);
  return compute == out_dtype ? out : out.to(out_dtype);
}

}  // namespace

Tensor sum(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  const DType dt = dtype.value_or(is_floating(x.dtype()) ? x.dtype() : DType::Int64);
  Tensor out = run_reduce(ReduceOp::Sum, "sum", x, dims, keepdim, dt);
  if (is_floating(dt) && autograd::any_requires_grad({x})) {
    const ReducedShape r = reduced_shape(x, dims, keepdim, "sum");
    autograd::record("SumBackward0", {x}, {out}, {}, functions::sum_backward(r.keep_shape, x.shape()));
  }
  return out;
}

Tensor mean(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  const DType dt = dtype.value_or(x.dtype());
  EMBER_CHECK(is_floating(dt), Error, "mean: could not infer output dtype. Input dtype must be a floating point "
              "dtype, got ", dtype_name(dt), "; convert with .float() first");
  Tensor out = run_reduce(ReduceOp::Mean, "mean", x, dims, keepdim, dt);
  if (autograd::any_requires_grad({x})) {
    const ReducedShape r = reduced_shape(x, dims, keepdim, "mean");
    autograd::record("MeanBackward0", {x}, {out}, {}, functions::mean_backward(r.keep_shape, x.shape(), r.count));
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
