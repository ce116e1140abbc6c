// The conv family: conv1d, conv2d, conv_transpose1d/2d with PyTorch's
// arguments (NCHW; unbatched inputs accepted). Lists of one entry apply to
// every spatial dim. Inputs and weight must share a dtype, as in PyTorch.
#pragma once
#include <string>
#include <vector>

#include <ember/core/cpu/conv.h>
#include <ember/core/tensor.h>

namespace ember {

using IntList = std::vector<int64_t>;

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), const IntList& stride = {1},
              const IntList& padding = {0}, const IntList& dilation = {1}, int64_t groups = 1);
// padding "valid" (none) or "same" (output size = input size; stride must be 1).
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const std::string& padding, const IntList& dilation = {1}, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), const IntList& stride = {1},
              const IntList& padding = {0}, const IntList& dilation = {1}, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const IntList& stride,
              const std::string& padding, const IntList& dilation = {1}, int64_t groups = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const IntList& stride = {1}, const IntList& padding = {0},
                        const IntList& output_padding = {0}, int64_t groups = 1, const IntList& dilation = {1});
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const IntList& stride = {1}, const IntList& padding = {0},
                        const IntList& output_padding = {0}, int64_t groups = 1, const IntList& dilation = {1});

// torch.backends.cudnn's switches, process-wide, read by the CUDA
// convolutions (cuda/conv.cpp) at each call.
struct CudnnFlags {
  bool enabled = true;         // false: CUDA convolutions raise (cuDNN is ember's only GPU conv)
  bool benchmark = false;      // time cuDNN's algorithms once per shape and keep the fastest
  bool deterministic = false;  // only algorithms whose results are reproducible run to run
  bool allow_tf32 = true;      // float32 convolutions may use TF32 tensor cores (PyTorch's default)
};
CudnnFlags cudnn_flags();
void set_cudnn_flags(const CudnnFlags& flags);

// The three primitives everything above (and every backward) reduces to:
// batched 4-D tensors, geometry and output sizes already decided and checked.
namespace conv_detail {
// [N, C, H, W] * [OC, C/g, KH, KW] -> [N, OC, OH, OW]
Tensor conv(const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g, int64_t OH, int64_t OW);
// [N, Cin, OH, OW] with [Cin, Cout/g, KH, KW] -> [N, Cout, H, W]
Tensor conv_transpose(const Tensor& x, const Tensor& w, const Tensor& bias, const cpu::ConvGeom& g, int64_t H,
                      int64_t W);
// conv's weight gradient: x [N, C, H, W], gy [N, OC, OH, OW] -> [OC, C/g, KH, KW]
Tensor conv_weight(const Tensor& x, const Tensor& gy, const cpu::ConvGeom& g, int64_t KH, int64_t KW);
}  // namespace conv_detail

}  // namespace ember
