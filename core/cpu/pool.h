// CPU kernels of the pool family over contiguous [planes, H, W] data
// (planes = N*C), float32 or float64. Windows are either fixed
// (kernel/stride/padding/dilation) or adaptive (PyTorch's floor/ceil split).
#pragma once
#include <cstdint>

#include <ember/core/tensor.h>

namespace ember::cpu {

struct PoolGeom {
  bool adaptive = false;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t H = 0, W = 0, OH = 0, OW = 0;
  // Averages only.
  bool count_include_pad = true;
  int64_t divisor_override = 0;  // 0: none
};

// out [planes, OH, OW], indices (int64, h*W + w in the input plane).
void max_pool2d(Tensor& out, Tensor& indices, const Tensor& x, const PoolGeom& g);
void avg_pool2d(Tensor& out, const Tensor& x, const PoolGeom& g);
// The adjoint of avg_pool2d: gx [planes, H, W] from gy [planes, OH, OW].
void avg_pool2d_backward(Tensor& gx, const Tensor& gy, const PoolGeom& g);

}  // namespace ember::cpu
