// MultiheadAttention of the C++ frontend, as torch::nn::MultiheadAttention
// and Python's nn.MultiheadAttention: a packed in-projection (in_proj_weight
// [3E, E]) when kdim = vdim = embed_dim, separate q/k/v_proj_weight ([E, E],
// [E, kdim], [E, vdim]) otherwise; in_proj_bias [3E]; bias_k / bias_v
// [1, 1, E] with add_bias_kv; an out_proj Linear. State_dict keys are PyTorch's.
#pragma once
#include <cstdint>
#include <memory>
#include <tuple>

#include <ember/nn/layers.h>

namespace ember::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  MultiheadAttentionOptions& dropout(double v) { dropout_ = v; return *this; }
  MultiheadAttentionOptions& bias(bool v) { bias_ = v; return *this; }
  // true: inputs and output are [N, L, E]; false (torch's default): [L, N, E].
  MultiheadAttentionOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  // Feature sizes of key and value (default embed_dim).
  MultiheadAttentionOptions& kdim(int64_t v) { kdim_ = v; return *this; }
  MultiheadAttentionOptions& vdim(int64_t v) { vdim_ = v; return *this; }
  // Appends a learned key/value (bias_k, bias_v) to the projected keys and values.
  MultiheadAttentionOptions& add_bias_kv(bool v) { add_bias_kv_ = v; return *this; }
  // Appends a zero key/value after the projection (and after bias_k/bias_v).
  MultiheadAttentionOptions& add_zero_attn(bool v) { add_zero_attn_ = v; return *this; }

  int64_t embed_dim_, num_heads_, kdim_, vdim_;
  double dropout_ = 0.0;
  bool bias_ = true, batch_first_ = false, add_bias_kv_ = false, add_zero_attn_ = false;
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
  // Unbatched inputs ([L, E]) give unbatched results. Masks cover the S given
  // keys; appended bias/zero keys are always attended to.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  std::tuple<Tensor, Tensor> operator()(const Tensor& query, const Tensor& key, const Tensor& value) {
    return forward(query, key, value);
  }
  // xavier_uniform projection weights, zero biases, xavier_normal bias_k /
  // bias_v; out_proj.weight keeps Linear's init.
  void reset_parameters();

  MultiheadAttentionOptions options;
  int64_t head_dim;
  bool qkv_same_embed_dim;
  Tensor in_proj_weight;                               // when qkv_same_embed_dim
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;  // otherwise
  Tensor in_proj_bias;                                 // undefined when bias is false
  Tensor bias_k, bias_v;                               // with add_bias_kv
  std::shared_ptr<Linear> out_proj;
};

}  // namespace ember::nn
