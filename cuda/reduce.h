// CUDA reduction kernels (cuda/reduce.cu), with the signatures of
// core/cpu/reduce.h: the front-end lays the input out as a contiguous
// [outer, reduced, inner] block on the GPU; `out` is contiguous with
// outer*inner elements. No CUDA headers here.
#pragma once
#include <ember/core/cpu/reduce.h>
#include <ember/core/tensor.h>

namespace ember::cuda {

void reduce(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);
void var(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner, double correction,
         bool take_sqrt);
void norm(Tensor& out, const Tensor& x, double p, int64_t outer, int64_t reduced, int64_t inner);
void prod_others(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);
void logsumexp(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);
void arg_reduce(bool is_max, Tensor& values, Tensor& indices, const Tensor& x, int64_t outer, int64_t reduced,
                int64_t inner);
void cumsum(Tensor& out, const Tensor& x, int64_t outer, int64_t length, int64_t inner);
void grad_coeff(GradCoeff kind, Tensor& out, const Tensor& a, const Tensor& b, double p);

}  // namespace ember::cuda
