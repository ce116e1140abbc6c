// ConvTranspose2d, RMSNorm and MultiheadAttention of the C++ frontend:
// shapes, PyTorch's parameter names and init, values against independent
// compositions of ops, gradients reaching every parameter.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::to_vector;
using test::values;

namespace {

std::vector<std::string> keys(const NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& kv : named) out.push_back(kv.first);
  return out;
}

void require_close(const Tensor& a, const Tensor& b, double eps = 1e-5) {
  REQUIRE(a.shape() == b.shape());
  require_values(a, to_vector(b), eps);
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : to_vector(t)) m = std::max(m, std::abs(v));
  return m;
}

// Attention of one batch element, head by head with narrow() and an explicit
// exp / sum softmax: x [L, E] and key/value memories [S, kdim] / [S, vdim] ->
// ([L, E], weights [H, L, S + appended keys]). bias_k / bias_v and a zero key
// are appended per head after the projection; the mask gets zero columns.
std::pair<Tensor, Tensor> reference_attention(const nn::MultiheadAttention& mha, const Tensor& x, const Tensor& kmem,
                                              const Tensor& vmem, const Tensor& additive_mask /* [L, S] or {} */) {
  const int64_t E = mha.options.embed_dim_, H = mha.options.num_heads_, D = E / H;
  const DType dt = x.dtype();
  std::vector<Tensor> heads, weights;
  for (int64_t h = 0; h < H; ++h) {
    auto proj = [&](const Tensor& in, int64_t which) {
      const Tensor& separate = which == 0 ? mha.q_proj_weight : which == 1 ? mha.k_proj_weight : mha.v_proj_weight;
      Tensor w = mha.qkv_same_embed_dim ? mha.in_proj_weight.narrow(0, which * E + h * D, D)
                                        : separate.narrow(0, h * D, D);
      Tensor y = matmul(in, w.transpose(0, 1));
      return mha.in_proj_bias.defined() ? y.add(mha.in_proj_bias.narrow(0, which * E + h * D, D)) : y;
    };
    Tensor q = proj(x, 0), k = proj(kmem, 1), v = proj(vmem, 2), mask = additive_mask;
    auto append = [&](const Tensor& k_row, const Tensor& v_row) {
      k = cat({k, k_row.reshape({1, D})}, 0);
      v = cat({v, v_row.reshape({1, D})}, 0);
      if (mask.defined()) mask = cat({mask, zeros({mask.size(0), 1}, dt)}, 1);
    };
    if (mha.bias_k.defined()) {
      append(mha.bias_k.flatten(0, -1).narrow(0, h * D, D), mha.bias_v.flatten(0, -1).narrow(0, h * D, D));
    }
    if (mha.options.add_zero_attn_) append(zeros({D}, dt), zeros({D}, dt));
    Tensor s = matmul(q, k.transpose(0, 1)).div(full({}, std::sqrt(static_cast<double>(D)), DType::Float64));
    if (mask.defined()) s = s.add(mask);
    Tensor e = s.sub(s.amax({1}, true)).exp();
    Tensor p = e.div(e.sum({1}, true));
    weights.push_back(p.unsqueeze(0));
    heads.push_back(matmul(p, v));
  }
  Tensor cat_heads = cat(heads, 1);
  Tensor out = matmul(cat_heads, mha.out_proj->weight.transpose(0, 1));
  if (mha.out_proj->bias.defined()) out = out.add(mha.out_proj->bias);
  return {out, cat(weights, 0)};
}

}  // namespace

TEST_CASE("ConvTranspose2d: weight layout, init, values, options", "[nn_layers]") {
  manual_seed(0);
  nn::ConvTranspose2d up(4, 6, 3);
  REQUIRE(up.weight.shape() == Shape{4, 6, 3, 3});  // [in, out/groups, kH, kW]
  REQUIRE(keys(up.state_dict()) == std::vector<std::string>{"weight", "bias"});
  REQUIRE(max_abs(up.weight) <= 1 / std::sqrt(54.0));  // fan_in = weight.size(1) * 9
  REQUIRE(max_abs(up.weight) > 1 / std::sqrt(54.0) / 2);
  REQUIRE(max_abs(up.bias) <= 1 / std::sqrt(54.0));
  REQUIRE(up.forward(ones({2, 4, 5, 5})).shape() == Shape{2, 6, 7, 7});

  // A 2x2 all-ones kernel: stride 2 copies each input into a 2x2 block,
  // stride 1 sums overlapping windows.
  Tensor x = values({1, 2, 3, 4}, {1, 1, 2, 2});
  nn::ConvTranspose2d s2(nn::ConvTranspose2dOptions(1, 1, 2).stride(2).bias(false));
  nn::ConvTranspose2d s1(nn::ConvTranspose2dOptions(1, 1, 2));
  {
    NoGradGuard g;
    s2.weight.fill_(1);
    s1.weight.fill_(1);
    s1.bias.fill_(0.5);
  }
  REQUIRE(!s2.bias.defined());
  require_values(s2.forward(x), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  require_values(s1.forward(x), {1.5, 3.5, 2.5, 4.5, 10.5, 6.5, 3.5, 7.5, 4.5});

  // The geometry: (H - 1) * s - 2p + d (k - 1) + output_padding + 1.
  nn::ConvTranspose2d geo(
      nn::ConvTranspose2dOptions(4, 6, {3, 2}).stride({2, 3}).padding(1).output_padding({1, 2}).groups(2).dilation(
          {1, 2}));
  REQUIRE(geo.weight.shape() == Shape{4, 3, 3, 2});
  REQUIRE(max_abs(geo.weight) <= 1 / std::sqrt(18.0));
  REQUIRE(geo.forward(ones({1, 4, 5, 4})).shape() == Shape{1, 6, 10, 12});

  // The transposed conv is the gradient of conv2d with respect to its input.
  Tensor inp = randn({2, 4, 5, 4});
  Tensor probe = zeros({2, 6, 10, 12}).requires_grad_(true);
  conv2d(probe, geo.weight.detach(), Tensor(), IntList{2, 3}, IntList{1, 1}, IntList{1, 2}, 2)
      .mul(inp)
      .sum()
      .backward();
  Tensor no_bias = geo.forward(inp).sub(geo.bias.detach().reshape({1, 6, 1, 1}));
  // <conv2d(probe), inp> = <probe, conv_transpose2d(inp)>, so probe.grad is the transposed conv.
  require_close(no_bias.detach(), probe.grad(), 1e-4);

  Tensor y = geo.forward(inp).sum();
  y.backward();
  REQUIRE(geo.weight.grad().shape() == geo.weight.shape());
  REQUIRE(geo.bias.grad().shape() == geo.bias.shape());

  require_throws<ValueError>([] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(3, 4, 3).groups(2)); },
                             "divisible by groups");
  require_throws<ValueError>([] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(2, 4, 3).output_padding({1, 1, 1})); },
                             "ConvTranspose2d: output_padding");
}

TEST_CASE("RMSNorm: weight ones, eps default, values and gradients", "[nn_layers]") {
  nn::RMSNorm norm(Shape{3});
  REQUIRE(keys(norm.state_dict()) == std::vector<std::string>{"weight"});
  require_values(norm.weight, {1, 1, 1});
  Tensor x = values({1, 2, 3, -4, 0, 4}, {2, 3});
  const double r0 = std::sqrt(14.0 / 3 + std::numeric_limits<float>::epsilon());
  const double r1 = std::sqrt(32.0 / 3 + std::numeric_limits<float>::epsilon());
  require_values(norm.forward(x), {1 / r0, 2 / r0, 3 / r0, -4 / r1, 0, 4 / r1}, 1e-5);

  nn::RMSNorm eps_norm(Shape{2, 3}, 0.5, true);
  {
    NoGradGuard g;
    eps_norm.weight.copy_(values({1, 2, 3, 4, 5, 6}, {2, 3}));
  }
  const double r = std::sqrt((1 + 4 + 9 + 16 + 0 + 16) / 6.0 + 0.5);
  require_values(eps_norm.forward(x), {1 / r, 4 / r, 9 / r, -16 / r, 0, 24 / r}, 1e-5);
  eps_norm.forward(x).sum().backward();
  REQUIRE(eps_norm.weight.grad().shape() == Shape{2, 3});

  nn::RMSNorm plain(Shape{3}, std::nullopt, false);
  REQUIRE(plain.state_dict().empty());
  REQUIRE(!plain.weight.defined());
  require_close(plain.forward(x), norm.forward(x).detach());
}

TEST_CASE("MultiheadAttention: PyTorch's parameter names, shapes and init", "[nn_layers][attention]") {
  manual_seed(0);
  nn::MultiheadAttention mha(8, 2);
  REQUIRE(keys(mha.state_dict()) ==
          std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  REQUIRE(mha.in_proj_weight.shape() == Shape{24, 8});
  REQUIRE(mha.head_dim == 4);
  const double xavier = std::sqrt(6.0 / 32);
  REQUIRE(max_abs(mha.in_proj_weight) <= xavier);
  REQUIRE(max_abs(mha.in_proj_weight) > xavier / 2);
  REQUIRE(max_abs(mha.in_proj_bias) == 0);
  REQUIRE(max_abs(mha.out_proj->bias) == 0);
  REQUIRE(max_abs(mha.out_proj->weight) <= 1 / std::sqrt(8.0));

  nn::MultiheadAttention no_bias(nn::MultiheadAttentionOptions(8, 4).bias(false));
  REQUIRE(keys(no_bias.state_dict()) == std::vector<std::string>{"in_proj_weight", "out_proj.weight"});

  // Sequence-first [L, N, E] by default; batch_first [N, L, E].
  auto [out, w] = mha.forward(randn({5, 3, 8}), randn({7, 3, 8}), randn({7, 3, 8}));
  REQUIRE(out.shape() == Shape{5, 3, 8});
  REQUIRE(w.shape() == Shape{3, 5, 7});
  auto [o2, w2] = mha.forward(randn({5, 3, 8}), randn({7, 3, 8}), randn({7, 3, 8}), {}, true, {}, false);
  REQUIRE(w2.shape() == Shape{3, 2, 5, 7});
  auto [o3, w3] = mha.forward(randn({5, 8}), randn({7, 8}), randn({7, 8}), {}, false);
  REQUIRE(o3.shape() == Shape{5, 8});
  REQUIRE(!w3.defined());
  (void)o2;

  require_throws<ValueError>([] { nn::MultiheadAttention(6, 4); }, "divisible by num_heads");
  require_throws<ValueError>([&] { mha.forward(randn({5, 3, 6}), randn({5, 3, 6}), randn({5, 3, 6})); },
                             "MultiheadAttention: was expecting embedding dimension of 8");
  require_throws<ValueError>(
      [&] { mha.forward(randn({5, 3, 8}), randn({7, 3, 8}), randn({7, 3, 8}), {}, true, zeros({5, 5})); },
      "2D attn_mask");
  require_throws<Error>(
      [&] { mha.forward(randn({5, 3, 8}), randn({7, 3, 8}), randn({7, 3, 8}), {}, true, {}, true, true); },
      "is_causal");
}

TEST_CASE("MultiheadAttention: values against a per-head composition, masks, gradients",
          "[nn_layers][attention]") {
  manual_seed(1);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(6, 3).batch_first(true));
  mha.to(DType::Float64);
  {
    NoGradGuard g;  // non-zero biases so the test sees them
    mha.in_proj_bias.uniform_(-0.5, 0.5);
    mha.out_proj->bias.uniform_(-0.5, 0.5);
  }
  const int64_t N = 2, L = 4, S = 5;
  Tensor x = randn({N, L, 6}, DType::Float64), mem = randn({N, S, 6}, DType::Float64);

  // A causal-style bool mask (true = blocked) and a key padding mask on batch 1.
  Tensor attn = ones({L, S}, DType::Bool).triu(2);
  Tensor kpm = zeros({N, S}, DType::Bool);
  {
    NoGradGuard g;
    kpm.select(0, 1).narrow(0, 3, 2).fill_(1);
  }
  auto [out, w] = mha.forward(x, mem, mem, kpm, true, attn, false);
  REQUIRE(out.shape() == Shape{N, L, 6});
  REQUIRE(w.shape() == Shape{N, 3, L, S});
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t n = 0; n < N; ++n) {
    Tensor add = zeros({L, S}, DType::Float64).masked_fill(attn, full({}, -inf, DType::Float64));
    if (n == 1) add = add.masked_fill(kpm.select(0, 1).unsqueeze(0), full({}, -inf, DType::Float64));
    auto [ref_out, ref_w] = reference_attention(mha, x.select(0, n), mem.select(0, n), mem.select(0, n), add);
    require_close(out.select(0, n), ref_out, 1e-10);
    require_close(w.select(0, n), ref_w, 1e-10);
  }
  // A float mask is added as is; averaged weights are the head mean.
  Tensor fmask = randn({L, S}, DType::Float64);
  auto [fout, fw] = mha.forward(x, mem, mem, {}, true, fmask);
  auto [ref_out, ref_w] = reference_attention(mha, x.select(0, 0), mem.select(0, 0), mem.select(0, 0), fmask);
  require_close(fout.select(0, 0), ref_out, 1e-10);
  require_close(fw.select(0, 0), ref_w.mean({0}), 1e-10);

  fout.square().sum().backward();
  for (const auto& [name, p] : mha.named_parameters()) {
    INFO(name);
    REQUIRE(p.grad().defined());
    REQUIRE(max_abs(p.grad()) > 0);
  }

  // Dropout applies only while training.
  nn::MultiheadAttention drop(nn::MultiheadAttentionOptions(6, 2).dropout(0.9));
  Tensor q = randn({3, 1, 6});
  drop.eval();
  auto [e1, ew1] = drop.forward(q, q, q);
  auto [e2, ew2] = drop.forward(q, q, q);
  require_close(e1, e2);
  drop.train();
  auto [t1, tw1] = drop.forward(q, q, q);
  bool any_zero = false;
  for (double v : to_vector(tw1)) any_zero = any_zero || v == 0;
  REQUIRE(any_zero);
}

TEST_CASE("MultiheadAttention: kdim / vdim, add_bias_kv, add_zero_attn", "[nn_layers][attention]") {
  manual_seed(2);
  nn::MultiheadAttention mha(
      nn::MultiheadAttentionOptions(6, 3).kdim(4).vdim(5).add_bias_kv(true).add_zero_attn(true));
  REQUIRE(!mha.qkv_same_embed_dim);
  REQUIRE(!mha.in_proj_weight.defined());
  REQUIRE(keys(mha.state_dict()) == std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                             "in_proj_bias", "bias_k", "bias_v", "out_proj.weight",
                                                             "out_proj.bias"});
  REQUIRE(mha.k_proj_weight.shape() == Shape{6, 4});
  REQUIRE(mha.v_proj_weight.shape() == Shape{6, 5});
  REQUIRE(mha.bias_k.shape() == Shape{1, 1, 6});
  REQUIRE(max_abs(mha.k_proj_weight) <= std::sqrt(6.0 / 10));  // xavier_uniform with fans 4 and 6
  REQUIRE(max_abs(mha.v_proj_weight) <= std::sqrt(6.0 / 11));
  REQUIRE(max_abs(mha.bias_k) > 0);  // xavier_normal, not zeros
  REQUIRE(keys(nn::MultiheadAttention(nn::MultiheadAttentionOptions(6, 3).kdim(6).vdim(6)).state_dict()).front() ==
          "in_proj_weight");

  mha.to(DType::Float64);
  {
    NoGradGuard g;
    mha.in_proj_bias.uniform_(-0.5, 0.5);
    mha.out_proj->bias.uniform_(-0.5, 0.5);
  }
  const int64_t N = 2, L = 3, S = 4;
  Tensor x = randn({L, N, 6}, DType::Float64), km = randn({S, N, 4}, DType::Float64),
         vm = randn({S, N, 5}, DType::Float64);
  Tensor attn = ones({L, S}, DType::Bool).triu(1);
  Tensor kpm = zeros({N, S}, DType::Bool);
  {
    NoGradGuard g;
    kpm.select(0, 0).narrow(0, 2, 2).fill_(1);
  }
  auto [out, w] = mha.forward(x, km, vm, kpm, true, attn, false);
  REQUIRE(out.shape() == Shape{L, N, 6});
  REQUIRE(w.shape() == Shape{N, 3, L, S + 2});
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t n = 0; n < N; ++n) {
    Tensor add = zeros({L, S}, DType::Float64).masked_fill(attn, full({}, -inf, DType::Float64));
    add = add.masked_fill(kpm.select(0, n).unsqueeze(0), full({}, -inf, DType::Float64));
    auto [ref_out, ref_w] = reference_attention(mha, x.select(1, n), km.select(1, n), vm.select(1, n), add);
    require_close(out.select(1, n), ref_out, 1e-10);
    require_close(w.select(0, n), ref_w, 1e-10);
  }
  out.square().sum().backward();
  for (const auto& [name, p] : mha.named_parameters()) {
    INFO(name);
    REQUIRE(p.grad().defined());
    REQUIRE(max_abs(p.grad()) > 0);
  }
  require_throws<ValueError>([&] { mha.forward(x, vm, vm); }, "embedding dimensions 4 and 5");
}
