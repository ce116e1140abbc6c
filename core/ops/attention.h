// scaled_dot_product_attention (torch.nn.functional's): softmax(q k^T * scale
// + mask) v, fused on CUDA (cuda/attention.cu) when it can be, else composed
// of ember ops (the "math" path, any device, differentiable twice).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <ember/core/tensor.h>
#include <ember/cuda/attention.h>

namespace ember {

// query [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev]
// (batch dims broadcast on the math path). attn_mask, broadcastable to
// [..., L, S]: bool (true = attend) or floating (added to the scores; float32
// or query's dtype). is_causal: query i attends key j <= i (the mask is tril
// aligned to the top-left, also when L != S); not together with attn_mask.
// scale defaults to 1 / sqrt(E). dropout_p > 0 drops attention weights (always,
// as PyTorch: pass 0 in eval mode). enable_gqa: key / value may have fewer
// heads (dim -3) than query, dividing its count; each serves query heads
// h * group .. (h + 1) * group - 1 (repeat_interleave). A row that may attend no
// key gives zeros. Float16 / bfloat16 math runs in float32.
//
// The fused path is taken for CUDA float16/bfloat16 inputs without attn_mask,
// with dropout_p == 0, E == Ev a multiple of 8 up to 128, equal batch dims and
// a GPU of compute capability 8.0+, while flash_sdp_enabled(); its autograd
// node is "ScaledDotProductFlashAttentionBackward0" (no double backward).
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt, bool enable_gqa = false);

// Why the fused path would not run for these arguments ("" when it would).
std::string flash_attention_blocker(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0, bool is_causal = false,
                                    bool enable_gqa = false);

// The fused kernels' backward: gradients of query, key and value (their
// shapes, query's dtype) from grad_out and what the fused forward saved
// (its output and the float32 logsumexp of each query row, [N, L]).
std::vector<Tensor> scaled_dot_product_flash_attention_backward(const Tensor& grad_out, const Tensor& query,
                                                                const Tensor& key, const Tensor& value,
                                                                const Tensor& out, const Tensor& logsumexp,
                                                                double scale, bool is_causal);

// How the fused kernels read `inputs` (tensors [..., rows, E] with the same
// batch dims, e.g. q, k, v): the batch dims are cut at one place into an outer
// group (batch) and an inner one (heads, the returned count), each group
// merged into one stride; the kernels find slice n's rows at
// (n / heads) * batch_stride + (n % heads) * head_stride. The cut is the one
// that leaves the fewest inputs unreadable; an input is read in place when
// both its groups merge, its last dim is contiguous and its rows are 16-byte
// aligned (data pointer and every stride a multiple of 16 bytes), else it is
// copied contiguous (copied[i] says which). GPT-2's q, k, v ([B, H, T, D]
// views of one [B, T, 3C] projection) and its output gradient are read in place.
struct FlashOperands {
  int64_t heads = 1, cut = 0;
  std::vector<cuda::FlashOperand> operands;
  std::vector<bool> copied;
};
FlashOperands flash_operands(const std::vector<Tensor>& inputs);

// A new tensor for a kernel output shaped like `like` (an input with batch
// dims cut at `cut`), its memory in like's stride order, as PyTorch lays out
// its flash attention's output and gradients: for GPT-2's q ([B, H, T, D] over
// [B, T, H, D] memory) the output's transpose(1, 2) is contiguous, so the
// model's reshape to [B, T, C] copies nothing. Contiguous when like has
// broadcast (stride 0) dims or that order cannot be addressed at the cut.
cuda::FlashOperand flash_output(const Tensor& like, DType dtype, int64_t cut);

// PyTorch's torch.backends.cuda.enable_flash_sdp / enable_math_sdp: one
// setting each for the process (default on). With the math path off, inputs
// the fused kernel cannot take raise instead of falling back.
void set_flash_sdp_enabled(bool enabled);
bool flash_sdp_enabled();
void set_math_sdp_enabled(bool enabled);
bool math_sdp_enabled();

}  // namespace ember
