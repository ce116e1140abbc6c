// Analytic backward of normalization, written with ember ops:
//   gx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)),  gxhat = g * w
// (RMS norm drops the mean(gxhat) term; eval batch_norm is gx = gxhat * rstd),
//   gw = sum(g * xhat), gb = sum(g) over the dims the weight broadcasts along.
#include <ember/autograd/functions/norm.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/unary.h>

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

}  // namespace

Vjp normalize_backward(NormSpec spec) {
  return [spec](const TensorList& g, const TensorList& s, const std::vector<bool>& needs) {
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
