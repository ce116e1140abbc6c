// CUDA kernels of the binary family (cuda/binary.cu), with the signatures of
// core/cpu/binary.h; binary() also takes float16/bfloat16 operands for the
// arithmetic ops (computing in float). Differences from the CPU: an integer division or
// remainder by zero gives 0 instead of raising (the GPU cannot raise without
// a synchronization; PyTorch's CUDA kernels give an unspecified value too).
#pragma once
#include <ember/core/cpu/binary.h>
#include <ember/core/tensor.h>

namespace ember::cuda {

void binary(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha);
void logical_not(Tensor& out, const Tensor& a);
void bitwise_not(Tensor& out, const Tensor& a);
void where(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void lerp(Tensor& out, const Tensor& start, const Tensor& end, const Tensor& weight);
void masked_fill(Tensor& out, const Tensor& self, const Tensor& mask, const Scalar& value);

}  // namespace ember::cuda
