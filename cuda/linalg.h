// CUDA kernels of the linalg family (cuSOLVER), with the contract of
// core/cpu/linalg.h: batched column-major float32/float64 matrices worked on
// in place, int32 pivots and info on the same GPU, LAPACK's info codes
// (0: success) written per matrix instead of errors thrown. No CUDA headers
// here: the core calls these; a CPU build links cuda/no_cuda_linalg.cpp.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

void lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info);
void lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool transpose = false);
void cholesky(const Tensor& a, bool upper, const Tensor& info);
void triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool unitriangular);  // cuBLAS trsm
void geqrf(const Tensor& a, const Tensor& tau);
void orgqr(const Tensor& q, const Tensor& tau);
void eigh(const Tensor& a, const Tensor& w, bool upper, bool vectors, const Tensor& info);
// m >= n, as on the CPU (cuSOLVER's gesvd requires it).
void svd(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vh, bool full, bool vectors,
         const Tensor& info);

}  // namespace ember::cuda
