#include <ember/autograd/functions/conv.h>

#include <ember/core/ops/conv.h>
#include <ember/core/ops/reduce.h>

namespace ember::autograd::functions {

using namespace conv_detail;

Vjp conv_backward(const cpu::ConvGeom& geom) {
  return [geom](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor &x = s[0], &w = s[1];
    TensorList out(3);
    if (need[0]) out[0] = conv_transpose(g[0], w, Tensor(), geom, x.size(2), x.size(3));
    if (need[1]) out[1] = conv_weight(x, g[0], geom, w.size(2), w.size(3));
    if (need.size() > 2 && need[2]) out[2] = sum(g[0], {0, 2, 3});
    return out;
  };
}

Vjp conv_transpose_backward(const cpu::ConvGeom& geom) {
  return [geom](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor &x = s[0], &w = s[1];
    TensorList out(3);
    // The output is the image side: the conv of it gives back x's grid.
    if (need[0]) out[0] = conv(g[0], w, Tensor(), geom, x.size(2), x.size(3));
    if (need[1]) out[1] = conv_weight(g[0], x, geom, w.size(2), w.size(3));
    if (need.size() > 2 && need[2]) out[2] = sum(g[0], {0, 2, 3});
    return out;
  };
}

Vjp conv_weight_backward(const cpu::ConvGeom& geom) {
  return [geom](const TensorList& g, const TensorList& s, const std::vector<bool>& need) {
    const Tensor &x = s[0], &gy = s[1];
    TensorList out(2);
    if (need[0]) out[0] = conv_transpose(gy, g[0], Tensor(), geom, x.size(2), x.size(3));
    if (need[1]) out[1] = conv(x, g[0], Tensor(), geom, gy.size(2), gy.size(3));
    return out;
  };
}

}  // namespace ember::autograd::functions
