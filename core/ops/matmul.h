// The matmul family: matrix, batched and vector products with PyTorch's
// shape rules. Inputs must share a dtype (PyTorch does not promote here).
#pragma once
#include <ember/core/tensor.h>

namespace ember {

// 1-D @ 1-D: dot; 2-D @ 1-D: matrix-vector; 1-D @ 2-D: vector-matrix;
// 2-D @ 2-D: matrix product; more dims: batched, batch dims broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);    // [M, K] @ [K, N]
Tensor bmm(const Tensor& a, const Tensor& b);   // [B, M, K] @ [B, K, N], no broadcasting
Tensor mv(const Tensor& a, const Tensor& v);    // [M, K] @ [K]
Tensor dot(const Tensor& a, const Tensor& b);   // [K] . [K] -> 0-d
Tensor outer(const Tensor& a, const Tensor& b); // [M] x [N] -> [M, N]
// beta * input + alpha * (m1 @ m2), input broadcast to [M, N].
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1,
             const Scalar& alpha = 1);

// How float32 products may trade precision for speed on the GPU (PyTorch's
// torch.set_float32_matmul_precision): Highest keeps full float32; High and
// Medium allow TF32 tensor cores. One setting for the process; backs both
// ember.set_float32_matmul_precision and ember.backends.cuda.matmul.allow_tf32
// (allow_tf32 is true exactly when the precision is not Highest). Default Highest.
enum class Float32MatmulPrecision { Highest, High, Medium };
void set_float32_matmul_precision(Float32MatmulPrecision p);
Float32MatmulPrecision float32_matmul_precision();

}  // namespace ember
