#include <ember/nn/attention.h>

#include <cmath>
#include <limits>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/core/ops/attention.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/nn_misc.h>
#include <ember/core/ops/shape.h>
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

// xavier_uniform / xavier_normal of a weight whose fans are size(0) and size(1) times the rest.
void xavier_(Tensor& w, bool normal) {
  int64_t rest = 1;
  for (int64_t d = 2; d < w.dim(); ++d) rest *= w.size(d);
  const double fans = static_cast<double>((w.size(0) + w.size(1)) * rest);
  if (normal) {
    w.normal_(0, std::sqrt(2.0 / fans));
  } else {
    const double bound = std::sqrt(6.0 / fans);
    w.uniform_(-bound, bound);
  }
}

// Zero columns appended to the last dim of an additive mask, for appended keys.
Tensor pad_keys(const Tensor& mask, int64_t extra) {
  Shape shape = mask.shape();
  shape.back() = extra;
  return cat({mask, zeros(shape, mask.dtype(), mask.device())}, -1);
}

}  // namespace

MultiheadAttention::MultiheadAttention(MultiheadAttentionOptions o) : Module(kName), options(o) {
  const int64_t e = o.embed_dim_, h = o.num_heads_;
  EMBER_CHECK(e > 0 && h > 0, ValueError, kName, ": embed_dim and num_heads must be greater than 0, got embed_dim=",
              e, " and num_heads=", h);
  EMBER_CHECK(e % h == 0, ValueError, kName, ": embed_dim (", e, ") must be divisible by num_heads (", h, ")");
  EMBER_CHECK(o.dropout_ >= 0 && o.dropout_ <= 1, ValueError, kName,
              ": dropout probability has to be between 0 and 1, but got ", o.dropout_);
  EMBER_CHECK(o.kdim_ > 0 && o.vdim_ > 0, ValueError, kName, ": kdim (", o.kdim_, ") and vdim (", o.vdim_,
              ") must be positive");
  head_dim = e / h;
  qkv_same_embed_dim = o.kdim_ == e && o.vdim_ == e;
  if (qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({e, e}));
    k_proj_weight = register_parameter("k_proj_weight", empty({e, o.kdim_}));
    v_proj_weight = register_parameter("v_proj_weight", empty({e, o.vdim_}));
  }
  if (o.bias_) in_proj_bias = register_parameter("in_proj_bias", empty({3 * e}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(e, e, o.bias_));
  if (o.add_bias_kv_) {
    bias_k = register_parameter("bias_k", empty({1, 1, e}));
    bias_v = register_parameter("bias_v", empty({1, 1, e}));
  }
  reset_parameters();
}

void MultiheadAttention::reset_parameters() {
  NoGradGuard no_grad;
  for (Tensor* w : {&in_proj_weight, &q_proj_weight, &k_proj_weight, &v_proj_weight})
    if (w->defined()) xavier_(*w, false);
  if (in_proj_bias.defined()) {
    in_proj_bias.zero_();
    out_proj->bias.zero_();
  }
  if (bias_k.defined()) {
    xavier_(bias_k, true);
    xavier_(bias_v, true);
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
  EMBER_CHECK(query_in.shape().back() == E, ValueError, kName, ": was expecting embedding dimension of ", E,
              ", got query of shape ", query_in.shape_str());
  EMBER_CHECK(key_in.shape().back() == options.kdim_ && value_in.shape().back() == options.vdim_, ValueError, kName,
              ": expected key and value of embedding dimensions ", options.kdim_, " and ", options.vdim_,
              ", got key ", key_in.shape_str(), " and value ", value_in.shape_str());
  Shape key_lead = key_in.shape(), value_lead = value_in.shape();  // all but the feature dim
  key_lead.pop_back(), value_lead.pop_back();
  EMBER_CHECK(key_lead == value_lead, ValueError, kName, ": key shape ", key_in.shape_str(),
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

  const std::vector<Tensor> w =
      qkv_same_embed_dim ? in_proj_weight.chunk(3) : std::vector<Tensor>{q_proj_weight, k_proj_weight, v_proj_weight};
  std::vector<Tensor> b(3);
  if (in_proj_bias.defined()) b = in_proj_bias.chunk(3);
  Tensor q = project(query, w[0], b[0]), k = project(key, w[1], b[1]), v = project(value, w[2], b[2]);
  int64_t extra = 0;  // keys appended after the S given ones
  if (bias_k.defined()) {
    k = cat({k, bias_k.expand({1, N, E})}, 0);
    v = cat({v, bias_v.expand({1, N, E})}, 0);
    ++extra;
  }
  // [L, N, H*D] -> [N, H, L, D]
  q = q.reshape({L, N, H, D}).permute({1, 2, 0, 3});
  k = k.reshape({S + extra, N, H, D}).permute({1, 2, 0, 3});
  v = v.reshape({S + extra, N, H, D}).permute({1, 2, 0, 3});
  if (options.add_zero_attn_) {
    Tensor z = zeros({N, H, 1, D}, k.dtype(), k.device());
    k = cat({k, z}, 2);
    v = cat({v, z}, 2);
    ++extra;
  }

  Tensor mask = additive(attn_mask, q.dtype(), "attn_mask");
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
  Tensor pad = additive(kpm, q.dtype(), "key_padding_mask");
  if (pad.defined()) {
    EMBER_CHECK(pad.shape() == (Shape{N, S}), ValueError, kName, ": expected key_padding_mask of shape [", N,
                ", ", S, "], got ", kpm.shape_str());
    pad = pad.reshape({N, 1, 1, S});
    mask = mask.defined() ? mask.add(pad) : pad;
  }
  if (mask.defined() && extra) mask = pad_keys(mask, extra);
  const double p = is_training() ? options.dropout_ : 0.0;
  Tensor weights, heads;  // heads: [N, H, L, D]
  if (!need_weights) {
    // The weights are not returned: one call, fused on the GPU where it can be.
    heads = scaled_dot_product_attention(q, k, v, mask, p);
  } else {
    Tensor scores = matmul(q, k.transpose(-2, -1)).mul(scalar_tensor(1.0 / std::sqrt(static_cast<double>(D))));
    if (mask.defined()) scores = scores.add(mask);
    weights = softmax(scores, -1);
    if (p > 0) weights = dropout(weights, p, true);
    heads = matmul(weights, v);
  }

  Tensor out = heads.permute({2, 0, 1, 3}).reshape({L, N, E});  // [N, H, L, D] -> [L, N, E]
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
