// Analytic backward of normalization, written with ember ops:
//   gx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)),  gxhat = g * w
// (RMS norm drops the mean(gxhat) term; eval batch_norm is gx = gxhat * rstd),
//   gw = sum(g * xhat), gb = sum(g) over the dims the weight broadcasts along.
#include <ember/autograd/functions/norm.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/cpu/norm.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/unary.h>
#include <ember/cuda/norm.h>

namespace ember::autograd::functions {

namespace {

// Sums g (of the view's shape) down to the weight's broadcast shape, then to `shape`.
Tensor sum_to_weight(const Tensor& g, const Shape& w_view, const Shape& shape) {
  Dims dims;
  for (int64_t d = 0; d < static_cast<int64_t>(w_view.size()); ++d) {
    if (w_view[d] == 1 && g.size(d) != 1) dims.push_back(d);
  }
  const Tensor s = dims.empty() ? g : sum(g, dims, /*keepdim=*/true);
  return s.reshape(shape);
}

// batch_norm's backward as one kernel (first order only: records nothing).
TensorList channel_backward(const NormSpec& spec, const Tensor& g, const TensorList& s,
                            const std::vector<bool>& needs) {
  const Tensor& x0 = s[0];
  const DType compute = s[3].dtype();  // the statistics are in the compute dtype
  auto prep = [&](const Tensor& t) { return (t.dtype() == compute ? t : t.to(compute)).contiguous(); };
  const Tensor x = prep(x0.detach());
  const Tensor gy = prep(g);
  const Tensor w = s[1].defined() ? prep(s[1].detach()) : Tensor();
  const int64_t n = spec.view[0], c = spec.view[1], inner = spec.view[2];
  Tensor gx = needs[0] ? empty(x0.shape(), compute, x0.device()) : Tensor();
  Tensor sum_g = empty({c}, compute, x0.device()), sum_gxhat = empty({c}, compute, x0.device());
  if (x.device().is_cuda()) {
    cuda::channel_norm_backward(gx, sum_g, sum_gxhat, gy, x, prep(s[2]), prep(s[3]), w, n, c, inner,
                                spec.batch_stats);
  } else {
    cpu::channel_norm_backward(gx, sum_g, sum_gxhat, gy, x, prep(s[2]), prep(s[3]), w, n, c, inner,
                               spec.batch_stats);
  }
  TensorList out(needs.size());
  out[0] = gx;
  if (needs.size() > 1 && needs[1]) out[1] = sum_gxhat.reshape(spec.param_shape);
  if (needs.size() > 2 && needs[2]) out[2] = sum_g.reshape(spec.param_shape);
  return out;
}

// layer_norm / rms_norm / group_norm's backward as one fused kernel on either
// device (first order only: records nothing). The normalized dims are the trailing ones.
TensorList row_backward(const NormSpec& spec, const Tensor& g, const TensorList& s, const std::vector<bool>& needs) {
  const DType acc = s[3].dtype();  // the statistics' dtype
  // The CPU kernel computes in the statistics' dtype: half inputs are widened
  // first and gx rounded once at the end (CUDA's kernel reads them as they are).
  const bool on_cuda = s[0].device().is_cuda();
  const DType kernel_dtype = on_cuda ? s[0].dtype() : acc;
  const Tensor x = s[0].detach().to(kernel_dtype).contiguous();
  int64_t cols = 1;
  for (int64_t d : spec.dims) cols *= spec.view[d];
  const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
  const Tensor gy = (g.dtype() == x.dtype() ? g : g.to(x.dtype())).contiguous();
  const Tensor w = s[1].defined() ? s[1].detach().to(acc).contiguous() : Tensor();
  TensorList out(needs.size());
  Tensor gx = needs[0] ? empty(x.shape(), x.dtype(), x.device()) : Tensor();
  Tensor gw = needs.size() > 1 && needs[1] ? empty(spec.param_shape, acc, x.device()) : Tensor();
  Tensor gb = needs.size() > 2 && needs[2] ? empty(spec.param_shape, acc, x.device()) : Tensor();
  const Tensor mean = spec.rms ? Tensor() : s[2].contiguous(), rstd = s[3].contiguous();
  if (x.device().is_cuda()) {
    cuda::row_norm_backward(gx, gw, gb, gy, x, mean, rstd, w, rows, cols, spec.rms);
  } else {
    cpu::row_norm_backward(gx, gw, gb, gy, x, mean, rstd, w, rows, cols, spec.rms);
  }
  out[0] = gx.defined() && gx.dtype() != s[0].dtype() ? gx.to(s[0].dtype()) : gx;
  if (gw.defined()) out[1] = gw;
  if (gb.defined()) out[2] = gb;
  return out;
}

// Whether spec's normalized dims are the trailing dims of its view.
bool trailing_dims(const NormSpec& spec) {
  const int64_t nd = static_cast<int64_t>(spec.view.size()), k = static_cast<int64_t>(spec.dims.size());
  for (int64_t i = 0; i < k; ++i) {
    if (spec.dims[i] != nd - k + i) return false;
  }
  return k > 0;
}

}  // namespace

Vjp normalize_backward(NormSpec spec) {
  return [spec](const TensorList& g, const TensorList& s, const std::vector<bool>& needs) {
    if (spec.channel_kernel && !grad_enabled() && s[0].numel() > 0) {
      return channel_backward(spec, g[0], s, needs);
    }
    if (!spec.channel_kernel && spec.batch_stats && !grad_enabled() && s[0].numel() > 0 && trailing_dims(spec)) {
      return row_backward(spec, g[0], s, needs);
    }
    const Shape x_shape = s[0].shape();
    const Tensor x = s[0].reshape(spec.view);
    const Tensor& w = s[1];
    Tensor mu = s[2], rs = s[3];
    if (spec.batch_stats && grad_enabled()) {
      // create_graph: the statistics as functions of x, so their derivatives are recorded.
      const Tensor eps = full({}, spec.eps, x.dtype(), x.device());
      if (spec.rms) {
        rs = rsqrt(add(mean(square(x), spec.dims, true), eps));
      } else {
        mu = mean(x, spec.dims, true);
        rs = rsqrt(add(mean(square(sub(x, mu)), spec.dims, true), eps));
      }
    }
    const Tensor xhat = spec.rms ? mul(x, rs) : mul(sub(x, mu), rs);
    const Tensor gy = g[0].reshape(spec.view);
    TensorList out(needs.size());
    if (needs.size() > 0 && needs[0]) {
      const Tensor gxhat = w.defined() ? mul(gy, w.reshape(spec.w_view)) : gy;
      Tensor inner = gxhat;
      if (spec.batch_stats) {
        inner = sub(inner, mul(xhat, mean(mul(gxhat, xhat), spec.dims, true)));
        if (!spec.rms) inner = sub(inner, mean(gxhat, spec.dims, true));
      }
      out[0] = mul(inner, rs).reshape(x_shape);
    }
    if (needs.size() > 1 && needs[1]) out[1] = sum_to_weight(mul(gy, xhat), spec.w_view, spec.param_shape);
    if (needs.size() > 2 && needs[2]) out[2] = sum_to_weight(gy, spec.w_view, spec.param_shape);
    return out;
  };
}

}  // namespace ember::autograd::functions
