// CUDA kernels of the pool family, with cpu/pool.h's contracts: contiguous
// [planes, H, W] data (planes = N*C) of float32, float64, float16 or bfloat16
// (accumulated in float32, float64 for float64). No CUDA headers here; a CPU
// build links cuda/no_cuda_nn.cpp instead.
#pragma once
#include <ember/core/cpu/pool.h>

namespace ember::cuda {

// out [planes, OH, OW], indices (int64, h*W + w in the input plane).
void max_pool2d(Tensor& out, Tensor& indices, const Tensor& x, const cpu::PoolGeom& g);
// gx [planes, H*W] = 0, then gx[p, indices[p, o]] += gy[p, o] (atomic adds).
void max_pool2d_backward(Tensor& gx, const Tensor& gy, const Tensor& indices, int64_t planes, int64_t plane_in,
                         int64_t plane_out);
void avg_pool2d(Tensor& out, const Tensor& x, const cpu::PoolGeom& g);
// The adjoint of avg_pool2d: gx [planes, H, W] from gy [planes, OH, OW].
void avg_pool2d_backward(Tensor& gx, const Tensor& gy, const cpu::PoolGeom& g);

}  // namespace ember::cuda
