// The fused (flash-style) scaled dot product attention kernels. No CUDA
// headers here: core/ops/attention.cpp calls these; a CPU build links
// cuda/no_cuda_attention.cpp instead.
//
// Layout: the inputs q [..., L, E], k and v [..., S, E] and grad_out
// [..., L, E] share their batch dims, seen by the kernels as N = batch * heads
// slices (FlashOperand says where each slice's rows are: views are read in
// place); so are the outputs out, gk and gv (written where their FlashOperand
// says); the float32 lse, delta and gq_acc are contiguous [N, L(, E)]. One dtype, float16 or bfloat16, on one GPU, with
// L, S >= 1 and E a multiple of 8 up to 128. The causal mask is PyTorch's:
// query i attends key j when j <= i (tril aligned top-left).
#pragma once
#include <ember/core/tensor.h>

namespace ember::cuda {

// An input (or output) as the kernels read (write) it: row i of slice n (b = n / heads,
// h = n % heads) starts at tensor.data_ptr() + b * batch_stride +
// h * head_stride + i * row_stride elements, and its E elements are
// contiguous. The base and every stride times the element size are multiples
// of 16 bytes (the kernels load 16 bytes at a time); core/ops/attention.cpp's
// flash_operands() makes such operands, copying only inputs that cannot be,
// and flash_output() such outputs (no two elements at one address).
struct FlashOperand {
  Tensor tensor;
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
};

// Whether the fused kernels run on GPU `index` for head size `head_dim`:
// compute capability 8.0 or newer (bf16 tensor cores), head_dim a multiple of
// 8 up to 128, and enough shared memory per block.
bool flash_attention_supported(int index, int64_t head_dim);

// out (like q: N slices of [L, E], q's dtype) = softmax(q k^T * scale,
// causal-masked) v, and lse [N, L] float32 = the natural-log logsumexp of each
// row of the masked, scaled scores (what the backward needs to recompute the
// probabilities). L, S and E are q's and k's sizes(-2) and q's size(-1).
void flash_attention_forward(const FlashOperand& out, Tensor& lse, const FlashOperand& q, const FlashOperand& k,
                             const FlashOperand& v, int64_t heads, double scale, bool causal);

// The backward from gout ([..., L, E], q's dtype), the forward's inputs, out
// and lse: adds the query gradient into gq_acc [N, L, E] float32 (contiguous,
// zero-filled by the caller; float atomics) and writes gk, gv (N slices of
// [S, E], q's dtype, allocated by the caller). delta [N, L] float32 is scratch.
void flash_attention_backward(Tensor& gq_acc, const FlashOperand& gk, const FlashOperand& gv, Tensor& delta,
                              const FlashOperand& gout,
                              const FlashOperand& q, const FlashOperand& k, const FlashOperand& v,
                              const FlashOperand& out, const Tensor& lse, int64_t heads, double scale, bool causal);

}  // namespace ember::cuda
