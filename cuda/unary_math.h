// CUDA kernels of the extra math functions (cuda/unary_math.cu), with the
// signatures of core/cpu/unary_math.h; float16/bfloat16 outputs are computed
// in float. No CUDA headers here (cuda/no_cuda_math.cpp stands in without CUDA).
#pragma once
#include <ember/core/cpu/unary_math.h>
#include <ember/core/tensor.h>

namespace ember::cuda {

void unary_math(MathOp op, Tensor& out, const Tensor& in);
void binary_math(MathOp2 op, Tensor& out, const Tensor& a, const Tensor& b);

}  // namespace ember::cuda
