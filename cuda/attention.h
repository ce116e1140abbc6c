// The fused (flash-style) scaled dot product attention kernels. No CUDA
// headers here: core/ops/attention.cpp calls these; a CPU build links
// cuda/no_cuda_attention.cpp instead.
//
// Layout: every tensor is contiguous, rows of E elements: q [N, L, E],
// k and v [N, S, E] (N = batch * heads), float16 or bfloat16 (one dtype),
// on one GPU, with L, S >= 1 and E a multiple of 8 up to 128. The causal mask
// is PyTorch's: query i attends key j when j <= i (tril aligned top-left).
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

// Whether the fused kernels run on GPU `index` for head size `head_dim`:
// compute capability 8.0 or newer (bf16 tensor cores), head_dim a multiple of
// 8 up to 128, and enough shared memory per block.
bool flash_attention_supported(int index, int64_t head_dim);

// out [N, L, E] (q's dtype) = softmax(q k^T * scale, causal-masked) v, and
// lse [N, L] float32 = the natural-log logsumexp of each row of the masked,
// scaled scores (what the backward needs to recompute the probabilities).
void flash_attention_forward(Tensor& out, Tensor& lse, const Tensor& q, const Tensor& k, const Tensor& v,
                             double scale, bool causal);

// The backward from gout [N, L, E] (contiguous, q's dtype), the forward's
// inputs, out and lse: adds the query gradient into gq_acc [N, L, E] float32
// (zero-filled by the caller; float atomics) and writes gk, gv [N, S, E]
// (q's dtype, allocated by the caller). delta [N, L] float32 is scratch.
void flash_attention_backward(Tensor& gq_acc, Tensor& gk, Tensor& gv, Tensor& delta, const Tensor& gout,
                              const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                              const Tensor& lse, double scale, bool causal);

}  // namespace ember::cuda
