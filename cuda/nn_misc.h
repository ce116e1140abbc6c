// CUDA kernels of embedding and dropout. No CUDA headers here: the core
// calls these; a CPU build links cuda/no_cuda_nn.cpp instead.
#pragma once
#include <cstdint>

#include <ember/core/generator.h>
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
// The signatures of core/cpu/nn_misc.h, with its draw (the same mask and
// bits for a seed): out = input * (keep ? scale : 0), mask = keep, for
// contiguous input, out and mask on one GPU (out may be input).
void native_dropout(Tensor& out, Tensor& mask, const Tensor& input, uint64_t threshold, double scale,
                    const PhiloxStream& s);
// grad_input (contiguous) = grad * (mask ? scale : 0), mask bool broadcast to grad.
void native_dropout_backward(Tensor& grad_input, const Tensor& grad, const Tensor& mask, double scale);

}  // namespace ember::cuda
