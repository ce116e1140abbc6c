// CUDA convolutions through cuDNN, with cpu/conv.h's contracts: contiguous
// NCHW operands of one dtype (float32, float64, float16, bfloat16) on one GPU.
// Each reads ember.backends.cudnn's flags (core/ops/conv.h: cudnn_flags()).
// Without cuDNN in the build they raise an error saying what to install; a
// CPU build links cuda/no_cuda_nn.cpp instead.
#pragma once
#include <ember/core/cpu/conv.h>

namespace ember::cuda {

// out [N, OC, OH, OW] = conv(x [N, C, H, W], w [OC, C/groups, KH, KW]) (+ bias [OC]).
void conv2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g);
// out [N, Cout, H, W] = transposed conv of x [N, Cin, OH, OW] with w [Cin, Cout/groups, KH, KW]
// (cuDNN's backward data) (+ bias [Cout]).
void conv_transpose2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g);
// gw [OC, C/groups, KH, KW]: conv2d's weight gradient for x [N, C, H, W] and gy [N, OC, OH, OW].
void conv2d_weight(Tensor& gw, const Tensor& x, const Tensor& gy, const cpu::ConvGeom& g);

// The number of convolution plans (descriptors + chosen algorithm, one per
// shape, dtype, direction and cuDNN flags) cached for GPU `index`; 0 before the
// GPU's first convolution and in builds without cuDNN. For tests.
size_t conv_plan_count(int index);

}  // namespace ember::cuda
