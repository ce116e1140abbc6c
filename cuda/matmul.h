// CUDA kernels of the matmul family (cuBLAS). No CUDA headers here: the core
// calls these; a CPU build links cuda/no_cuda_nn.cpp instead.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

// out = alpha * (a @ b) + beta * out, matrix by matrix over the last two dims,
// the contract of cpu::matmul: a is [batch..., M, K], b is [batch..., K, N]
// (either may be an expanded view with stride-0 batch dims), out is
// [batch..., M, N] over contiguous memory, all on one GPU with one dtype:
// float32 (TF32 when ember's float32 matmul precision allows it), float64,
// float16 or bfloat16 (both accumulated in float32).
void matmul(const Tensor& out, const Tensor& a, const Tensor& b, double alpha = 1.0, double beta = 0.0);

// out [M, N] = alpha * (a [M, K] @ b [K, N]) + bias [N] (added to every row)
// in one cublasLtMatmul with the BIAS epilogue, instead of copying the bias
// into out and running GEMM with beta = 1. Returns false, having written
// nothing, when the case is not one this path takes (dtype other than
// float32/float16/bfloat16, a bias that is not a packed 16-byte-aligned
// vector, sizes over 32 bits, or no cuBLASLt algorithm for it): the caller
// then takes the matmul() path.
bool matmul_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias, double alpha = 1.0);

}  // namespace ember::cuda
