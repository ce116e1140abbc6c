#include <ember/nn/attention.h>

#include <cmath>
#include <limits>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/nn_misc.h>
#include <ember/core/ops/softmax.h>

namespace ember::nn {
namespace {

constexpr const char* kName = "MultiheadAttention";

// x W^T + b, the projection each head slice goes through.
Tensor project(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor y = matmul(x, w.t());
  return b.defined() ? y.add(b) : y;
}

// A bool mask (true = may not attend) becomes 0 / -inf; a float mask is added as is.
Tensor additive(const Tensor& mask, DType dtype, const char* what) {
  if (!mask.defined()) return mask;
  if (mask.dtype() == DType::Bool) {
    return zeros(mask.shape(), dtype, mask.device())
        .masked_fill(mask, scalar_tensor(-std::numeric_limits<double>::infinity()));
  }
  EMBER_CHECK(is_floating(mask.dtype()), TypeError, kName, ": only bool and floating types of ", what,
              " are supported, got ", dtype_name(mask.dtype()));
  return mask.to(dtype);
}

}  // namespace

MultiheadAttention::MultiheadAttention(MultiheadAttentionOptions o) : Module(kName), options(o) {
  const int64_t e = o.embed_dim_, h = o.num_heads_;
  EMBER_CHECK(e > 0 && h > 0, ValueError, kName, ": embed_dim and num_heads must be greater than 0, got embed_dim=",
              e, " and num_heads=", h);
  EMBER_CHECK(e % h == 0, ValueError, kName, ": embed_dim (", e, ") must be divisible by num_heads (", h, ")");
  EMBER_CHECK(o.dropout_ >= 0 && o.dropout_ <= 1, ValueError, kName,
              ": dropout probability has to be between 0 and 1, but got ", o.dropout_);
  head_dim = e / h;
  in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
  if (o.bias_) in_proj_bias = register_parameter("in_proj_bias", empty({3 * e}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(e, e, o.bias_));
  reset_parameters();
}

void MultiheadAttention::reset_parameters() {
  NoGradGuard no_grad;
  // xavier_uniform: bound sqrt(6 / (fan_in + fan_out)) = sqrt(6 / (E + 3E)).
  const double bound = std::sqrt(6.0 / static_cast<double>(4 * options.embed_dim_));
  in_proj_weight.uniform_(-bound, bound);
  if (in_proj_bias.defined()) {
    in_proj_bias.zero_();
    out_proj->bias.zero_();
  }
}

std::tuple<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query_in, const Tensor& key_in,
                                                       const Tensor& value_in, const Tensor& key_padding_mask,
                                                       bool need_weights, const Tensor& attn_mask,
                                                       bool average_attn_weights, bool is_causal) {
  const int64_t E = options.embed_dim_, H = options.num_heads_, D = head_dim;
  EMBER_CHECK(query_in.dim() == 2 || query_in.dim() == 3, ValueError, kName,
              ": query should be unbatched 2D or batched 3D, got shape ", query_in.shape_str());
  const bool batched = query_in.dim() == 3;
  EMBER_CHECK(key_in.dim() == query_in.dim() && value_in.dim() == query_in.dim(), ValueError, kName, ": query ",
              query_in.shape_str(), ", key ", key_in.shape_str(), " and value ", value_in.shape_str(),
              " must all be ", batched ? "3D" : "2D");
  EMBER_CHECK(query_in.shape().back() == E && key_in.shape().back() == E && value_in.shape().back() == E,
              ValueError, kName, ": was expecting embedding dimension of ", E, ", got query ",
              query_in.shape_str(), ", key ", key_in.shape_str(), " and value ", value_in.shape_str());
  EMBER_CHECK(key_in.shape() == value_in.shape(), ValueError, kName, ": key shape ", key_in.shape_str(),
              " does not match value shape ", value_in.shape_str());
  EMBER_CHECK(!is_causal || attn_mask.defined(), Error, kName,
              ": need attn_mask if specifying the is_causal hint");

  // Work sequence-first: [L, N, E].
  Tensor query = query_in, key = key_in, value = value_in, kpm = key_padding_mask;
  if (!batched) {
    query = query.unsqueeze(1), key = key.unsqueeze(1), value = value.unsqueeze(1);
    if (kpm.defined()) kpm = kpm.unsqueeze(0);
  } else if (options.batch_first_) {
    query = query.transpose(0, 1), key = key.transpose(0, 1), value = value.transpose(0, 1);
  }
  const int64_t L = query.size(0), N = query.size(1), S = key.size(0);
  EMBER_CHECK(key.size(1) == N, ValueError, kName, ": query batch size ", N, " does not match key batch size ",
              key.size(1));

  const std::vector<Tensor> w = in_proj_weight.chunk(3);
  std::vector<Tensor> b(3);
  if (in_proj_bias.defined()) b = in_proj_bias.chunk(3);
  // [L, N, H*D] -> [N, H, L, D]
  Tensor q = project(query, w[0], b[0]).reshape({L, N, H, D}).permute({1, 2, 0, 3});
  Tensor k = project(key, w[1], b[1]).reshape({S, N, H, D}).permute({1, 2, 0, 3});
  Tensor v = project(value, w[2], b[2]).reshape({S, N, H, D}).permute({1, 2, 0, 3});

  Tensor scores = matmul(q, k.transpose(-2, -1)).mul(scalar_tensor(1.0 / std::sqrt(static_cast<double>(D))));
  Tensor mask = additive(attn_mask, scores.dtype(), "attn_mask");
  if (mask.defined()) {
    if (mask.dim() == 2) {
      EMBER_CHECK(mask.shape() == (Shape{L, S}), ValueError, kName, ": the shape of the 2D attn_mask is ",
                  mask.shape_str(), ", but should be [", L, ", ", S, "]");
      mask = mask.reshape({1, 1, L, S});
    } else {
      EMBER_CHECK(mask.dim() == 3 && mask.shape() == (Shape{N * H, L, S}), ValueError, kName,
                  ": the shape of the 3D attn_mask is ", mask.shape_str(), ", but should be [", N * H, ", ", L,
                  ", ", S, "]");
      mask = mask.reshape({N, H, L, S});
    }
  }
  Tensor pad = additive(kpm, scores.dtype(), "key_padding_mask");
  if (pad.defined()) {
    EMBER_CHECK(pad.shape() == (Shape{N, S}), ValueError, kName, ": expected key_padding_mask of shape [", N,
                ", ", S, "], got ", kpm.shape_str());
    pad = pad.reshape({N, 1, 1, S});
    mask = mask.defined() ? mask.add(pad) : pad;
  }
  if (mask.defined()) scores = scores.add(mask);
  Tensor weights = softmax(scores, -1);
  if (is_training() && options.dropout_ > 0) weights = dropout(weights, options.dropout_, true);

  Tensor out = matmul(weights, v).permute({2, 0, 1, 3}).reshape({L, N, E});  // [N, H, L, D] -> [L, N, E]
  out = out_proj->forward(out);
  if (!batched) {
    out = out.squeeze(1);
  } else if (options.batch_first_) {
    out = out.transpose(0, 1);
  }
  if (!need_weights) return {out, Tensor()};
  if (average_attn_weights) weights = weights.mean({1});
  if (!batched) weights = weights.squeeze(0);
  return {out, weights};
}

}  // namespace ember::nn
