// MultiheadAttention of the C++ frontend, as torch::nn::MultiheadAttention
// with kdim = vdim = embed_dim: one packed in-projection (in_proj_weight
// [3E, E], in_proj_bias [3E]) and an out_proj Linear, so state_dict keys are
// PyTorch's: in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias.
#pragma once
#include <cstdint>
#include <memory>
#include <tuple>

#include <ember/nn/layers.h>

namespace ember::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  MultiheadAttentionOptions& dropout(double v) { dropout_ = v; return *this; }
  MultiheadAttentionOptions& bias(bool v) { bias_ = v; return *this; }
  // true: inputs and output are [N, L, E]; false (torch's default): [L, N, E].
  MultiheadAttentionOptions& batch_first(bool v) { batch_first_ = v; return *this; }

  int64_t embed_dim_, num_heads_;
  double dropout_ = 0.0;
  bool bias_ = true, batch_first_ = false;
};

class MultiheadAttention : public Module {
 public:
  explicit MultiheadAttention(MultiheadAttentionOptions options);
  MultiheadAttention(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttention(MultiheadAttentionOptions(embed_dim, num_heads)) {}

  // Returns (output, weights). Masks, as torch: key_padding_mask [N, S] and
  // attn_mask [L, S] or [N * num_heads, L, S]; bool masks mark with true the
  // positions NOT to attend to, float masks are added to the scores.
  // is_causal is only a hint and needs attn_mask. weights ([N, L, S] averaged
  // over heads, or [N, H, L, S]) is undefined when need_weights is false.
  // Unbatched inputs ([L, E]) give unbatched results.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  std::tuple<Tensor, Tensor> operator()(const Tensor& query, const Tensor& key, const Tensor& value) {
    return forward(query, key, value);
  }
  // xavier_uniform in_proj_weight, zero biases; out_proj.weight keeps Linear's init.
  void reset_parameters();

  MultiheadAttentionOptions options;
  int64_t head_dim;
  Tensor in_proj_weight, in_proj_bias;  // in_proj_bias undefined when bias is false
  std::shared_ptr<Linear> out_proj;
};

}  // namespace ember::nn
