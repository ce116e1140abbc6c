// Backward of the norm family's fused kernels (core/ops/norm.cpp).
#pragma once
#include <ember/autograd/node.h>

namespace ember::autograd::functions {

// y = xhat * w + b with xhat = (x - mean) * rstd, or x * rstd when rms; x is
// viewed as `view`, the statistics reduce `dims` (kept as size 1), and the
// weight and bias (both of `param_shape`) broadcast as `w_view`.
struct NormSpec {
  Shape view;
  Dims dims;
  Shape w_view;
  Shape param_shape;  // weight's and bias's own shape
  double eps = 0;
  bool rms = false;
  // false in batch_norm's eval mode: the statistics are constants, not functions of x.
  bool batch_stats = true;
  // batch_norm's [n, c, inner] layout: without create_graph the backward runs
  // as one fused kernel (cpu::channel_norm_backward).
  bool channel_kernel = false;
};

// Inputs {x, weight, bias}; saved {x, weight, mean, rstd} (mean, rstd in the
// keepdim shape of the statistics). Under create_graph the statistics are
// recomputed from x with ember ops, so double backward is exact.
Vjp normalize_backward(NormSpec spec);

}  // namespace ember::autograd::functions
