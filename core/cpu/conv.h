// CPU kernels of the conv family: im2col + BLAS GEMM over the whole batch.
// All tensors reaching these kernels are contiguous, float32 or float64.
#pragma once
#include <cstdint>

#include <ember/core/tensor.h>

namespace ember::cpu {

// Where a 2-D kernel window sits: output (oh, ow) reads input row
// oh*stride_h - pad_h + i*dil_h. Padding is the leading side only; the
// trailing side follows from the output size, so asymmetric ("same")
// padding needs nothing more.
struct ConvGeom {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dil_h = 1, dil_w = 1;
  int64_t groups = 1;
};

// out [N, OC, OH, OW] = conv(x [N, C, H, W], w [OC, C/groups, KH, KW]) (+ bias [OC]).
void conv2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const ConvGeom& g);
// out [N, Cout, H, W] = transposed conv of x [N, Cin, OH, OW] with w [Cin, Cout/groups, KH, KW]:
// the adjoint of conv2d with input size [H, W] (+ bias [Cout]).
void conv_transpose2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const ConvGeom& g);
// gw [OC, C/groups, KH, KW] = gradient of conv2d's weight for input x [N, C, H, W] and
// output gradient gy [N, OC, OH, OW].
void conv2d_weight(Tensor& gw, const Tensor& x, const Tensor& gy, const ConvGeom& g);

}  // namespace ember::cpu
