// Reductions: argument checks, the [outer, reduced, inner] layout, the CPU
// kernel call and the autograd node. Statistics (var, std, norm, logsumexp)
// are in reduce_stats.cpp.
#include <ember/core/ops/reduce.h>
#include <ember/core/autocast.h>

#include <ember/autograd/functions/reduce.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/reduce.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce_layout.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>
#include <ember/cuda/reduce.h>

namespace ember {

namespace functions = autograd::functions;

namespace reduce_detail {

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

Layout layout_for(const Tensor& x_in, const ReducedShape& r, DType dtype) {
  const Tensor x = x_in.detach();
  Layout l;
  const Dims& red = r.reduced;
  bool block = true;  // the reduced dims are one run of adjacent dims
  for (size_t i = 1; i < red.size(); ++i) block = block && red[i] == red[i - 1] + 1;
  Tensor in;
  if (red.empty()) {
    in = x;
    l.outer = x.numel();
  } else if (block) {
    in = x;
    for (int64_t d = 0; d < x.dim(); ++d) {
      const int64_t s = x.shape()[d];
      if (d < red.front()) l.outer *= s;
      else if (d <= red.back()) l.reduced *= s;
      else l.inner *= s;
    }
  } else {
    Dims order = r.kept;
    order.insert(order.end(), red.begin(), red.end());
    in = permute(x, order);
    for (auto d : r.kept) l.outer *= x.shape()[d];
    l.reduced = r.count;
  }
  // One copy at most: the dtype conversion also makes the result contiguous.
  l.input = in.dtype() == dtype ? in.contiguous() : in.to(dtype).contiguous();
  return l;
}

void check_nonempty(const Tensor& x, const ReducedShape& r, const Dims& dims, const char* op) {
  if (dims.empty() && x.numel() == 0) {
    throw Error(str(op, "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                    "reduction dim with the 'dim' argument."));
  }
  for (auto d : r.reduced) {
    EMBER_CHECK(x.shape()[d] != 0, IndexError, op, "(): Expected reduction dim ", d, " to have non-zero size.");
  }
}

void check_backend(const Tensor& x, const char* op) {
  EMBER_CHECK(x.defined(), Error, op, ": expected a defined tensor");
  EMBER_CHECK(x.device().is_cpu() || x.device().is_cuda(), NotImplementedError, op, ": no kernel for device ",
              x.device().str());
}

namespace kernel {
void reduce(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  x.device().is_cuda() ? cuda::reduce(op, out, x, outer, reduced, inner) : cpu::reduce(op, out, x, outer, reduced, inner);
}
void var(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner, double correction,
         bool take_sqrt) {
  x.device().is_cuda() ? cuda::var(out, x, outer, reduced, inner, correction, take_sqrt)
                       : cpu::var(out, x, outer, reduced, inner, correction, take_sqrt);
}
void norm(Tensor& out, const Tensor& x, double p, int64_t outer, int64_t reduced, int64_t inner) {
  x.device().is_cuda() ? cuda::norm(out, x, p, outer, reduced, inner) : cpu::norm(out, x, p, outer, reduced, inner);
}
void logsumexp(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  x.device().is_cuda() ? cuda::logsumexp(out, x, outer, reduced, inner) : cpu::logsumexp(out, x, outer, reduced, inner);
}
void arg_reduce(bool is_max, Tensor& values, Tensor& indices, const Tensor& x, int64_t outer, int64_t reduced,
                int64_t inner) {
  x.device().is_cuda() ? cuda::arg_reduce(is_max, values, indices, x, outer, reduced, inner)
                       : cpu::arg_reduce(is_max, values, indices, x, outer, reduced, inner);
}
void cumsum(Tensor& out, const Tensor& x, int64_t outer, int64_t length, int64_t inner) {
  x.device().is_cuda() ? cuda::cumsum(out, x, outer, length, inner) : cpu::cumsum(out, x, outer, length, inner);
}
void prod_others(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  x.device().is_cuda() ? cuda::prod_others(out, x, outer, reduced, inner)
                       : cpu::prod_others(out, x, outer, reduced, inner);
}
void grad_coeff(GradCoeff kind, Tensor& out, const Tensor& a, const Tensor& b, double p) {
  out.device().is_cuda() ? cuda::grad_coeff(kind, out, a, b, p) : cpu::grad_coeff(kind, out, a, b, p);
}
}  // namespace kernel

Tensor grad_coeff(GradCoeff kind, const Tensor& a, const Tensor& b, double p) {
  const DType dt = compute_dtype(is_floating(a.dtype()) ? a.dtype() : b.dtype());
  const Device dev = common_device("grad_coeff", {a, b});  // a kernel must not read another device's memory
  Tensor out = empty(broadcast_shapes(a.shape(), b.shape(), "grad_coeff"), dt, dev);
  kernel::grad_coeff(kind, out, a.detach().to(dev, dt), b.detach().to(dev, dt), p);
  return out;
}

Tensor prod_others(const Tensor& x, std::optional<int64_t> dim) {
  const ReducedShape r = reduced_shape(x, dim ? Dims{*dim} : Dims{}, true, "prod");
  Layout l = layout_for(x, r, compute_dtype(x.dtype()));
  Tensor out = empty(l.input.shape(), l.input.dtype(), x.device());
  kernel::prod_others(out, l.input, l.outer, l.reduced, l.inner);
  return out;  // one reduced run: the layout is x's own shape
}

}  // namespace reduce_detail

using namespace reduce_detail;

namespace {

// Lays x out in `in_dtype`, allocates the output in `out_dtype` and calls
// kernel(out, input, outer, reduced, inner).
template <class Kernel>
Tensor run(const char* name, const Tensor& x, const ReducedShape& r, DType in_dtype, DType out_dtype,
           Kernel kernel) {
  check_backend(x, name);
  Layout l = layout_for(x, r, in_dtype);
  Tensor out = empty(r.out_shape, out_dtype, x.device());
  kernel(out, l.input, l.outer, l.reduced, l.inner);
  return out;
}

// A fold whose output has the input's (compute) dtype, cast to `dtype` after.
// On the GPU a sum or mean reads a 16-bit input as it is, into float32: no
// float32 copy of the input first (a bias gradient's sum under autocast).
Tensor run_fold(ReduceOp op, const char* name, const Tensor& x, const ReducedShape& r, DType dtype) {
  const DType compute = compute_dtype(dtype);
  const bool read_half = x.device().is_cuda() && is_half(x.dtype()) && compute == DType::Float32 &&
                         (op == ReduceOp::Sum || op == ReduceOp::Mean);
  Tensor out = run(name, x, r, read_half ? x.dtype() : compute, compute,
                   [op](Tensor& o, const Tensor& in, int64_t a, int64_t b, int64_t c) {
    kernel::reduce(op, o, in, a, b, c);
  });
  return compute == dtype ? out : out.to(dtype);
}

// sum and prod of integers and bools accumulate in int64.
DType accumulate_dtype(const Tensor& x, std::optional<DType> dtype) {
  return dtype.value_or(is_floating(x.dtype()) || is_complex(x.dtype()) ? x.dtype() : DType::Int64);
}

Tensor extreme(bool is_max, const Tensor& x, const Dims& dims, bool keepdim, const char* name,
               const char* node) {
  check_backend(x, name);
  const ReducedShape r = reduced_shape(x, dims, keepdim, name);
  check_nonempty(x, r, dims, name);
  Tensor out = run_fold(is_max ? ReduceOp::Max : ReduceOp::Min, name, x, r, x.dtype());
  if (is_floating(x.dtype()) && autograd::any_requires_grad({x})) {
    autograd::record(node, {x}, {out}, {x, out}, functions::extreme_backward(r.keep_shape, x.shape(), r.reduced));
  }
  return out;
}

std::tuple<Tensor, Tensor> extreme_dim(bool is_max, const Tensor& x, int64_t dim, bool keepdim) {
  const char* name = is_max ? "max" : "min";
  check_backend(x, name);
  const int64_t d = wrap_dim(dim, x.dim(), name);
  const ReducedShape r = reduced_shape(x, {d}, keepdim, name);
  check_nonempty(x, r, {d}, name);
  const DType compute = compute_dtype(x.dtype());
  Layout l = layout_for(x, r, compute);
  Tensor values = empty(r.out_shape, compute, x.device());
  Tensor indices = empty(r.out_shape, DType::Int64, x.device());
  kernel::arg_reduce(is_max, values, indices, l.input, l.outer, l.reduced, l.inner);
  if (compute != x.dtype()) values = values.to(x.dtype());
  if (is_floating(x.dtype()) && autograd::any_requires_grad({x})) {
    autograd::record(is_max ? "MaxBackward0" : "MinBackward0", {x}, {values}, {indices},
                     functions::index_reduce_backward(r.keep_shape, x.shape(), x.dim() == 0 ? 0 : d));
  }
  return {values, indices};
}

Tensor arg_extreme(bool is_max, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  const char* name = is_max ? "argmax" : "argmin";
  check_backend(x, name);
  const Dims dims = dim ? Dims{wrap_dim(*dim, x.dim(), name)} : Dims{};
  const ReducedShape r = reduced_shape(x, dims, keepdim, name);
  check_nonempty(x, r, dims, name);
  // Without a dim the index is into the flattened tensor: reduce everything in one run.
  Layout l = layout_for(x, r, compute_dtype(x.dtype()));
  if (!dim) l = Layout{l.input, 1, x.numel(), 1};
  Tensor indices = empty(r.out_shape, DType::Int64, x.device());
  Tensor none;
  kernel::arg_reduce(is_max, none, indices, l.input, l.outer, l.reduced, l.inner);
  return indices;
}

Tensor logical(ReduceOp op, const Tensor& x, const Dims& dims, bool keepdim) {
  const char* name = op == ReduceOp::All ? "all" : "any";
  const ReducedShape r = reduced_shape(x, dims, keepdim, name);
  Tensor out = run(name, x, r, compute_dtype(x.dtype()), DType::Bool,
                   [op](Tensor& o, const Tensor& in, int64_t a, int64_t b, int64_t c) { kernel::reduce(op, o, in, a, b, c); });
  // PyTorch keeps uint8 for uint8 inputs (a legacy of its byte masks).
  return x.dtype() == DType::UInt8 ? out.to(DType::UInt8) : out;
}

}  // namespace

Tensor sum(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  if (autocast::Scope ac{dtype ? nullptr : "sum", x}; ac) return sum(ac[0], dims, keepdim, dtype);
  if (is_complex(x.dtype())) {
    const Tensor out = complex_ops::sum(x, dims, keepdim);
    return dtype ? out.to(*dtype) : out;
  }
  const DType dt = accumulate_dtype(x, dtype);
  const ReducedShape r = reduced_shape(x, dims, keepdim, "sum");
  Tensor out = run_fold(ReduceOp::Sum, "sum", x, r, dt);
  if (is_floating(dt) && autograd::any_requires_grad({x})) {
    autograd::record("SumBackward0", {x}, {out}, {}, functions::sum_backward(r.keep_shape, x.shape()));
  }
  return out;
}

Tensor mean(const Tensor& x, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  if (is_complex(x.dtype())) {
    const Tensor out = complex_ops::mean(x, dims, keepdim);
    return dtype ? out.to(*dtype) : out;
  }
  const DType dt = dtype.value_or(x.dtype());
  EMBER_CHECK(is_floating(dt), Error, "mean: could not infer output dtype. Input dtype must be a floating point "
              "dtype, got ", dtype_name(dt), "; convert with .float() first");
  const ReducedShape r = reduced_shape(x, dims, keepdim, "mean");
  Tensor out = run_fold(ReduceOp::Mean, "mean", x, r, dt);
  if (autograd::any_requires_grad({x})) {
    autograd::record("MeanBackward0", {x}, {out}, {}, functions::mean_backward(r.keep_shape, x.shape(), r.count));
  }
  return out;
}

Tensor prod(const Tensor& x, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype) {
  if (autocast::Scope ac{dtype ? nullptr : "prod", x}; ac) return prod(ac[0], dim, keepdim, dtype);
  const DType dt = accumulate_dtype(x, dtype);
  const Dims dims = dim ? Dims{*dim} : Dims{};
  const ReducedShape r = reduced_shape(x, dims, dim ? keepdim : false, "prod");
  Tensor out = run_fold(ReduceOp::Prod, "prod", x, r, dt);
  if (is_floating(dt) && autograd::any_requires_grad({x})) {
    const std::optional<int64_t> d = dim && x.dim() > 0 ? std::optional<int64_t>(wrap_dim(*dim, x.dim(), "prod"))
                                                        : std::nullopt;
    autograd::record("ProdBackward0", {x}, {out}, {x, out}, functions::prod_backward(r.keep_shape, x.shape(), d));
  }
  return out;
}

Tensor max(const Tensor& x) { return extreme(true, x, {}, false, "max", "MaxBackward1"); }
Tensor min(const Tensor& x) { return extreme(false, x, {}, false, "min", "MinBackward1"); }
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) { return extreme_dim(true, x, dim, keepdim); }
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) { return extreme_dim(false, x, dim, keepdim); }
Tensor amax(const Tensor& x, const Dims& dims, bool keepdim) { return extreme(true, x, dims, keepdim, "amax", "AmaxBackward0"); }
Tensor amin(const Tensor& x, const Dims& dims, bool keepdim) { return extreme(false, x, dims, keepdim, "amin", "AminBackward0"); }
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return arg_extreme(true, x, dim, keepdim); }
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return arg_extreme(false, x, dim, keepdim); }
// A complex element counts as true when either part is non-zero.
Tensor all(const Tensor& x, const Dims& dims, bool keepdim) {
  return logical(ReduceOp::All, is_complex(x.dtype()) ? x.to(DType::Bool) : x, dims, keepdim);
}
Tensor any(const Tensor& x, const Dims& dims, bool keepdim) {
  return logical(ReduceOp::Any, is_complex(x.dtype()) ? x.to(DType::Bool) : x, dims, keepdim);
}

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  if (autocast::Scope ac{dtype ? nullptr : "cumsum", x}; ac) return cumsum(ac[0], dim, dtype);
  check_backend(x, "cumsum");
  const int64_t d = wrap_dim(dim, x.dim(), "cumsum");
  if (is_complex(x.dtype()) && (!dtype || is_complex(*dtype))) {
    // The running sums of the real and imaginary parts.
    if (x.dim() == 0) return x.to(dtype.value_or(x.dtype()), /*copy=*/true);
    const Tensor parts = cumsum(view_as_real(x.to(dtype.value_or(x.dtype()))), d);
    return view_as_complex(parts.contiguous());
  }
  const DType dt = accumulate_dtype(x, dtype);
  const DType compute = compute_dtype(dt);
  const ReducedShape r = reduced_shape(x, x.dim() == 0 ? Dims{} : Dims{d}, true, "cumsum");
  Layout l = layout_for(x, r, compute);
  Tensor out = empty(x.shape(), compute, x.device());
  kernel::cumsum(out, l.input, l.outer, l.reduced, l.inner);
  if (compute != dt) out = out.to(dt);
  if (is_floating(dt) && autograd::any_requires_grad({x})) {
    autograd::record("CumsumBackward0", {x}, {out}, {}, functions::cumsum_backward(x.dim() == 0 ? -1 : d));
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
Tensor Tensor::prod(std::optional<int64_t> dim, bool keepdim) const { return ember::prod(*this, dim, keepdim); }
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::min() const { return ember::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return ember::max(*this, dim, keepdim); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return ember::min(*this, dim, keepdim); }
Tensor Tensor::amax(const Dims& dims, bool keepdim) const { return ember::amax(*this, dims, keepdim); }
Tensor Tensor::amin(const Dims& dims, bool keepdim) const { return ember::amin(*this, dims, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return ember::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return ember::argmin(*this, dim, keepdim); }
Tensor Tensor::all(std::optional<int64_t> dim, bool keepdim) const {
  return ember::all(*this, dim ? Dims{*dim} : Dims{}, keepdim);
}
Tensor Tensor::any(std::optional<int64_t> dim, bool keepdim) const {
  return ember::any(*this, dim ? Dims{*dim} : Dims{}, keepdim);
}
Tensor Tensor::cumsum(int64_t dim, std::optional<DType> dtype) const { return ember::cumsum(*this, dim, dtype); }

}  // namespace ember
