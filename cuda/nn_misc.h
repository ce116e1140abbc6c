// CUDA kernels of embedding. No CUDA headers here: the core calls these; a
// CPU build links cuda/no_cuda_nn.cpp instead.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

// out[i, :] = weight[indices[i], :]: weight [rows, dim] and out [n, dim]
// contiguous, of one floating dtype; indices int64 [n], contiguous and
// range-checked.
void embedding_forward(Tensor& out, const Tensor& weight, const Tensor& indices);
// grad_weight = 0, then grad_weight[indices[i], :] += grad_rows[i, :]
// (atomic adds, so repeated indices accumulate in no fixed order):
// grad_weight [rows, dim] and grad_rows [n, dim] contiguous, of one floating dtype.
void embedding_backward(Tensor& grad_weight, const Tensor& grad_rows, const Tensor& indices);

}  // namespace ember::cuda
