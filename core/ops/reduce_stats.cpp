// Statistical reductions: var, std, norm, logsumexp (front-ends).
#include <cmath>

#include <ember/autograd/functions/reduce.h>
#include <ember/core/autocast.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/reduce_layout.h>
#include <ember/core/ops/unary.h>

namespace ember {

namespace functions = autograd::functions;
using namespace reduce_detail;

namespace {

// Runs one of the float kernels: x laid out in its compute dtype, result cast back.
template <class Kernel>
Tensor run_float(const char* name, const Tensor& x, const ReducedShape& r, DType dtype, Kernel kernel) {
  check_backend(x, name);
  const DType compute = compute_dtype(dtype);
  Layout l = layout_for(x, r, compute);
  Tensor out = empty(r.out_shape, compute, x.device());
  kernel(out, l.input, l.outer, l.reduced, l.inner);
  return compute == dtype ? out : out.to(dtype);
}

Tensor var_or_std(const Tensor& x, const Dims& dims, double correction, bool keepdim, bool take_sqrt) {
  const char* name = take_sqrt ? "std" : "var";
  EMBER_CHECK(is_floating(x.dtype()), Error, name, ": only floating point dtypes are supported, got ",
              dtype_name(x.dtype()));
  const ReducedShape r = reduced_shape(x, dims, keepdim, name);
  Tensor out = run_float(name, x, r, x.dtype(), [&](Tensor& o, const Tensor& in, int64_t a, int64_t b, int64_t c) {
    kernel::var(o, in, a, b, c, correction, take_sqrt);
  });
  if (autograd::any_requires_grad({x})) {
    const double denom = std::max(0.0, static_cast<double>(r.count) - correction);
    if (take_sqrt) {
      autograd::record("StdBackward0", {x}, {out}, {x, out}, functions::std_backward(r.keep_shape, x.shape(), r.reduced, correction, denom));
    } else {
      autograd::record("VarBackward0", {x}, {out}, {x}, functions::var_backward(r.keep_shape, x.shape(), r.reduced, denom));
    }
  }
  return out;
}

}  // namespace

Tensor var(const Tensor& x, const Dims& dims, double correction, bool keepdim) {
  return var_or_std(x, dims, correction, keepdim, false);
}

Tensor std_dev(const Tensor& x, const Dims& dims, double correction, bool keepdim) {
  return var_or_std(x, dims, correction, keepdim, true);
}

Tensor norm(const Tensor& x, double p, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  if (autocast::Scope ac{dtype ? nullptr : "norm", x}; ac) return norm(ac[0], p, dims, keepdim, dtype);
  if (is_complex(x.dtype())) {  // the norm of the magnitudes (differentiable through abs)
    const Tensor magnitudes = abs(dtype && is_complex(*dtype) ? x.to(*dtype) : x);
    return norm(magnitudes, p, dims, keepdim, dtype && !is_complex(*dtype) ? dtype : std::nullopt);
  }
  const DType dt = dtype.value_or(x.dtype());
  EMBER_CHECK(is_floating(dt), Error, "norm: input dtype should be floating point, got ", dtype_name(dt));
  EMBER_CHECK(!std::isnan(p), ValueError, "norm: p must not be NaN");
  const ReducedShape r = reduced_shape(x, dims, keepdim, "norm");
  if (std::isinf(p) || p < 0) {
    for (auto d : r.reduced) {
      EMBER_CHECK(x.shape()[d] != 0, IndexError, "norm: cannot compute the ", p, " norm over dim ", d,
                  " of size 0 because the operation does not have an identity");
    }
  }
  Tensor out = run_float("norm", x, r, dt, [&](Tensor& o, const Tensor& in, int64_t a, int64_t b, int64_t c) {
    kernel::norm(o, in, p, a, b, c);
  });
  if (autograd::any_requires_grad({x})) {
    autograd::record("NormBackward1", {x}, {out}, {x, out}, functions::norm_backward(r.keep_shape, x.shape(), r.reduced, p));
  }
  return out;
}

Tensor logsumexp(const Tensor& x, const Dims& dims, bool keepdim) {
  // Integers are promoted to the default float dtype, as in PyTorch.
  const DType dt = to_float_dtype(x.dtype());
  const ReducedShape r = reduced_shape(x, dims, keepdim, "logsumexp");
  Tensor out = run_float("logsumexp", x, r, dt, [&](Tensor& o, const Tensor& in, int64_t a, int64_t b, int64_t c) {
    kernel::logsumexp(o, in, a, b, c);
  });
  if (autograd::any_requires_grad({x})) {
    autograd::record("LogsumexpBackward0", {x}, {out}, {x, out},
                     functions::logsumexp_backward(r.keep_shape, x.shape(), r.kept, r.reduced));
  }
  return out;
}

Tensor Tensor::var(const Dims& dims, double correction, bool keepdim) const {
  return ember::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(const Dims& dims, double correction, bool keepdim) const {
  return ember::std_dev(*this, dims, correction, keepdim);
}
Tensor Tensor::norm(double p, const Dims& dims, bool keepdim) const { return ember::norm(*this, p, dims, keepdim); }
Tensor Tensor::logsumexp(const Dims& dims, bool keepdim) const { return ember::logsumexp(*this, dims, keepdim); }

}  // namespace ember
