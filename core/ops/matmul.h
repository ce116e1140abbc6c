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

}  // namespace ember
