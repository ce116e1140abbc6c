// CPU kernel of the matmul family: batched GEMM through BLAS for float32 and
// float64, a plain loop for integer types.
#pragma once
#include <string>

#include <ember/core/tensor.h>

namespace ember::cpu {

// out = alpha * (a @ b) + beta * out, matrix by matrix over the last two dims.
// a is [batch..., M, K] and b is [batch..., K, N] with the same batch dims
// (either may be an expanded view with stride-0 dims); out is [batch..., M, N]
// over contiguous memory. All three share one dtype (no bool, no half types).
// With beta == 0, out's previous contents are ignored (may be uninitialised).
void matmul(const Tensor& out, const Tensor& a, const Tensor& b, double alpha = 1.0, double beta = 0.0);

// Which BLAS ember runs on and the kernels it picked, for benchmarks and
// collect_env: "OpenBLAS 0.3.31 ... (core SkylakeX, 2 threads)".
std::string blas_info();

}  // namespace ember::cpu
