// CUDA kernels of the running reductions (cuda/scan.cu), with core/cpu/scan.h's
// signature. No CUDA headers here (cuda/no_cuda_scan.cpp stands in without CUDA).
#pragma once
#include <ember/core/cpu/scan.h>
#include <ember/core/tensor.h>

namespace ember::cuda {

void scan(ScanOp op, Tensor& out, Tensor& indices, const Tensor& x, int64_t outer, int64_t length, int64_t inner);

}  // namespace ember::cuda
