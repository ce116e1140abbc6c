// softmax / log_softmax front-ends: dtype handling, layout, kernel, autograd node.
#include <ember/core/ops/softmax.h>
#include <ember/core/autocast.h>

#include <ember/autograd/functions/softmax.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/softmax.h>
#include <ember/core/error.h>
#include <ember/cuda/softmax.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

Tensor run_softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype, bool log) {
  if (autocast::Scope ac{dtype ? nullptr : log ? "log_softmax" : "softmax", input}; ac)
    return run_softmax(ac[0], dim, dtype, log);
  const char* name = log ? "log_softmax" : "softmax";
  EMBER_CHECK(input.defined(), Error, name, ": expected a defined tensor");
  EMBER_CHECK(input.device().is_cpu() || input.device().is_cuda(), NotImplementedError, name,
              ": no kernel for device ", input.device().str());
  // dtype= converts before the op (and gradients flow back through the conversion).
  const Tensor x = dtype ? input.to(*dtype) : input;
  EMBER_CHECK(is_floating(x.dtype()), Error, name, ": expected a floating point input, got ", dtype_name(x.dtype()),
              "; pass dtype=ember.float32 or convert with .float()");
  const int64_t d = wrap_dim(dim, x.dim(), name);
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t i = 0; i < x.dim(); ++i) {
    const int64_t s = x.shape()[i];
    if (i < d) outer *= s;
    else if (i == d) n = s;
    else inner *= s;
  }
  const DType compute = is_half(x.dtype()) ? DType::Float32 : x.dtype();
  const Tensor in = x.dtype() == compute ? x.detach().contiguous() : x.detach().to(compute).contiguous();
  Tensor out = empty(x.shape(), compute, x.device());
  if (out.numel() > 0) {
    if (out.device().is_cuda()) cuda::softmax(out, in, outer, n, inner, log);
    else cpu::softmax(out, in, outer, n, inner, log);
  }
  if (compute != x.dtype()) out = out.to(x.dtype());
  if (autograd::any_requires_grad({x})) {
    if (log) autograd::record("LogSoftmaxBackward0", {x}, {out}, {out}, functions::log_softmax_backward(d));
    else autograd::record("SoftmaxBackward0", {x}, {out}, {out}, functions::softmax_backward(d));
  }
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return run_softmax(x, dim, dtype, false); }
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return run_softmax(x, dim, dtype, true); }

Tensor Tensor::softmax(int64_t dim, std::optional<DType> dtype) const { return ember::softmax(*this, dim, dtype); }
Tensor Tensor::log_softmax(int64_t dim, std::optional<DType> dtype) const {
  return ember::log_softmax(*this, dim, dtype);
}

}  // namespace ember
