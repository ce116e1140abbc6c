// Running reductions: dtype rules, the [outer, length, inner] layout (as
// cumsum's, core/ops/reduce_layout.h), the kernel call and the gradients.
#include <ember/core/ops/scan.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/scan.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/reduce_layout.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/unary.h>
#include <ember/cuda/scan.h>

namespace ember {

using namespace reduce_detail;
using autograd::TensorList;

namespace {

// The running reduction of x along dim d in `compute` (indices too for Max/Min),
// shaped like x.
std::tuple<Tensor, Tensor> run_scan(ScanOp op, const Tensor& x, int64_t d, DType compute, const char* name) {
  check_backend(x, name);
  autograd::NoGradGuard no_grad;
  const ReducedShape r = reduced_shape(x, x.dim() == 0 ? Dims{} : Dims{d}, true, name);
  Layout l = layout_for(x, r, compute);
  // x's own row-major order is [outer, length, inner] for one dim: the
  // outputs are written in it, as cumsum's are.
  Tensor out = empty(x.shape(), compute, x.device());
  Tensor indices = op == ScanOp::Max || op == ScanOp::Min ? empty(x.shape(), DType::Int64, x.device()) : Tensor();
  if (x.device().is_cuda()) cuda::scan(op, out, indices, l.input, l.outer, l.reduced, l.inner);
  else cpu::scan(op, out, indices, l.input, l.outer, l.reduced, l.inner);
  return {out, indices};
}

// The sum over j >= i along d (a reversed cumsum, kept exact by flipping).
Tensor reverse_cumsum(const Tensor& t, int64_t d) { return flip(cumsum(flip(t, {d}), d), {d}); }

Tensor reverse_logcumsumexp(const Tensor& t, int64_t d) { return flip(logcumsumexp(flip(t, {d}), d), {d}); }

// d cumprod(x) / dx . g, correct with zeros in x: before a column's first
// zero, sum_{j>=i} g_j out_j / x_i; at the first zero, the same sum with that
// zero replaced by one; after it, nothing.
Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& out, int64_t d) {
  const Tensor is_zero = eq(x, scalar_tensor(0.0));
  const Tensor zeros_so_far = cumsum(is_zero.to(DType::Int64), d);
  const Tensor before = eq(zeros_so_far, scalar_tensor(int64_t{0}));
  const Tensor at = logical_and(is_zero, eq(zeros_so_far, scalar_tensor(int64_t{1})));
  const Tensor one = ones_like(x);
  const Tensor safe_x = where(before, x, one);
  const Tensor early = div(reverse_cumsum(mul(g, out), d), safe_x);
  const Tensor lifted = cumprod(where(at, one, x), d);  // the first zero made one
  const Tensor at_zero = reverse_cumsum(mul(g, lifted), d);
  return where(before, early, where(at, at_zero, zeros_like(early)));
}

std::tuple<Tensor, Tensor> extreme_scan(bool is_max, const Tensor& x, int64_t dim) {
  const char* name = is_max ? "cummax" : "cummin";
  EMBER_CHECK(x.defined(), ValueError, name, ": got an undefined tensor");
  const int64_t d = wrap_dim(dim, x.dim(), name);  // a 0-d tensor takes dim 0 or -1
  // bool compares as uint8, the half types in float32; the values come back in x's dtype.
  const DType compute = x.dtype() == DType::Bool ? DType::UInt8 : is_half(x.dtype()) ? DType::Float32 : x.dtype();
  auto [values, indices] = run_scan(is_max ? ScanOp::Max : ScanOp::Min, x, d, compute, name);
  values = values.to(x.dtype());
  if (is_floating(x.dtype()) && autograd::any_requires_grad({x})) {
    const Shape shape = x.shape();
    const int64_t gd = x.dim() == 0 ? -1 : d;
    autograd::record(is_max ? "CummaxBackward0" : "CumminBackward0", {x}, {values}, {indices},
                     [shape, gd](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
                       if (gd < 0) return TensorList{g[0]};
                       return TensorList{scatter_add(zeros(shape, g[0].dtype(), g[0].device()), gd, s[0], g[0])};
                     });
  }
  return {values, indices};
}

}  // namespace

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  EMBER_CHECK(x.defined(), ValueError, "cumprod: got an undefined tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "cumprod");  // a 0-d tensor takes dim 0 or -1
  const DType dt = dtype.value_or(is_floating(x.dtype()) || is_complex(x.dtype()) ? x.dtype() : DType::Int64);
  const DType compute = is_half(dt) ? DType::Float32 : dt;
  auto [out, unused] = run_scan(ScanOp::Prod, x, d, compute, "cumprod");
  if (compute != dt) out = out.to(dt);
  if (is_floating(dt) && autograd::any_requires_grad({x})) {
    const int64_t gd = x.dim() == 0 ? -1 : d;
    autograd::record("CumprodBackward0", {x}, {out}, {x, out},
                     [gd](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
                       if (gd < 0) return TensorList{g[0]};
                       return TensorList{cumprod_backward(g[0], s[0].to(g[0].dtype()), s[1], gd)};
                     });
  }
  return out;
}

std::tuple<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) { return extreme_scan(true, x, dim); }
std::tuple<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) { return extreme_scan(false, x, dim); }

Tensor logcumsumexp(const Tensor& x, int64_t dim) {
  EMBER_CHECK(x.defined(), ValueError, "logcumsumexp: got an undefined tensor");
  EMBER_CHECK(is_floating(x.dtype()), Error, "logcumsumexp: expected a floating point tensor, got ",
              dtype_name(x.dtype()));
  const int64_t d = wrap_dim(dim, x.dim(), "logcumsumexp");  // a 0-d tensor takes dim 0 or -1
  const DType compute = is_half(x.dtype()) ? DType::Float32 : x.dtype();
  auto [out, unused] = run_scan(ScanOp::LogSumExp, x, d, compute, "logcumsumexp");
  out = out.to(x.dtype());
  if (autograd::any_requires_grad({x})) {
    const int64_t gd = x.dim() == 0 ? -1 : d;
    autograd::record("LogcumsumexpBackward0", {x}, {out}, {x, out},
                     [gd](const TensorList& g, const TensorList& s, const std::vector<bool>&) {
                       if (gd < 0) return TensorList{g[0]};
                       // sum_{j>=i} g_j exp(x_i - out_j), in log space, positive and negative parts apart.
                       const Tensor& x = s[0];
                       const Tensor& out = s[1];
                       const Tensor zero = zeros_like(g[0]);
                       const Tensor pos = log(maximum(g[0], zero)), neg = log(maximum(ember::neg(g[0]), zero));
                       return TensorList{sub(exp(add(x, reverse_logcumsumexp(sub(pos, out), gd))),
                                             exp(add(x, reverse_logcumsumexp(sub(neg, out), gd))))};
                     });
  }
  return out;
}

}  // namespace ember
