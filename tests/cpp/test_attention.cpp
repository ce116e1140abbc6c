// scaled_dot_product_attention from C++: values against an explicit
// composition, the causal mask's top-left alignment, gqa, gradients, the sdp
// switches and the errors naming the op. (The fused CUDA kernel is tested from
// Python, tests/python/test_cuda_attention.py, on a GPU.)
#include <cmath>
#include <vector>

#include "util.h"

using namespace ember;
using test::require_throws;
using test::require_values;
using test::to_vector;
using test::values;

namespace {

Tensor seq(const Shape& shape, double step, double start = -1.0) {
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<double>((i * 7) % 11);
  return values(v, shape, DType::Float64);
}

// softmax(q k^T * scale + additive) v with plain ops.
Tensor reference(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& additive, double scale) {
  Tensor s = matmul(q, k.transpose(-2, -1)).mul(scalar_tensor(scale));
  if (additive.defined()) s = add(s, additive);
  return matmul(softmax(s, -1), v);
}

}  // namespace

TEST_CASE("sdpa: values, float mask, causal aligned top-left", "[attention]") {
  const Tensor q = seq({2, 3, 4}, 0.3), k = seq({2, 5, 4}, 0.2, -0.5), v = seq({2, 5, 2}, 0.5);
  const Tensor out = scaled_dot_product_attention(q, k, v);
  REQUIRE(out.shape() == Shape{2, 3, 2});
  require_values(out, to_vector(reference(q, k, v, {}, 0.5)), 1e-12);

  const Tensor fmask = seq({3, 5}, 0.1);
  require_values(scaled_dot_product_attention(q, k, v, fmask, 0.0, false, 0.25),
                 to_vector(reference(q, k, v, fmask, 0.25)), 1e-12);

  // Causal with L = 3 < S = 5: query i sees keys 0..i.
  std::vector<double> tri(15);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) tri[i * 5 + j] = j <= i ? 0.0 : -INFINITY;
  const Tensor causal_add = values(tri, {3, 5}, DType::Float64);
  require_values(scaled_dot_product_attention(q, k, v, {}, 0.0, true), to_vector(reference(q, k, v, causal_add, 0.5)),
                 1e-12);
}

TEST_CASE("sdpa: gqa repeats key/value heads, gradients flow", "[attention]") {
  Tensor q = seq({1, 4, 3, 2}, 0.2).requires_grad_(), k = seq({1, 2, 3, 2}, 0.3).requires_grad_();
  Tensor v = seq({1, 2, 3, 2}, 0.4).requires_grad_();
  const Tensor out = scaled_dot_product_attention(q, k, v, {}, 0.0, true, std::nullopt, true);
  // Query heads 0, 1 use key head 0; heads 2, 3 use key head 1.
  const Tensor k_rep = cat({k.narrow(1, 0, 1), k.narrow(1, 0, 1), k.narrow(1, 1, 1), k.narrow(1, 1, 1)}, 1);
  const Tensor v_rep = cat({v.narrow(1, 0, 1), v.narrow(1, 0, 1), v.narrow(1, 1, 1), v.narrow(1, 1, 1)}, 1);
  require_values(out, to_vector(scaled_dot_product_attention(q, k_rep, v_rep, {}, 0.0, true)), 1e-12);
  out.sum().backward();
  REQUIRE(k.grad().shape() == k.shape());
  REQUIRE(v.grad().shape() == v.shape());
  // Each value row's gradient is the total attention it receives: summed over the 4 queries' rows.
  double total = 0;
  for (double g : to_vector(v.grad())) total += g;
  REQUIRE(total == Approx(4 * 3 * 2));  // every query row's weights sum to 1, times Ev = 2 columns
}

TEST_CASE("sdpa: switches and errors", "[attention]") {
  const Tensor q = seq({1, 2, 4}, 0.1);
  REQUIRE(flash_sdp_enabled());
  REQUIRE(math_sdp_enabled());
  REQUIRE(flash_attention_blocker(q, q, q).find("not on a CUDA device") != std::string::npos);
  set_math_sdp_enabled(false);
  require_throws<Error>([&] { scaled_dot_product_attention(q, q, q); }, "scaled_dot_product_attention: no available kernel");
  set_math_sdp_enabled(true);
  set_flash_sdp_enabled(false);
  REQUIRE(flash_attention_blocker(q, q, q).find("disabled") != std::string::npos);
  set_flash_sdp_enabled(true);

  require_throws<Error>([&] { scaled_dot_product_attention(q, q, q, ones({2, 2}, DType::Bool), 0.0, true); },
                        "scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True");
  require_throws<Error>([&] { scaled_dot_product_attention(q, seq({1, 2, 3}, 0.1), q); },
                        "scaled_dot_product_attention: query's last dim (4) must equal key's (3)");
  require_throws<Error>([&] { scaled_dot_product_attention(q, q.to(DType::Float32), q); }, "same dtype");
  require_throws<Error>(
      [&] { scaled_dot_product_attention(seq({1, 3, 2, 4}, 0.1), seq({1, 2, 2, 4}, 0.1), seq({1, 2, 2, 4}, 0.1), {},
                                         0.0, false, std::nullopt, true); },
      "must divide the number of heads of query (3)");
}

TEST_CASE("MultiheadAttention: need_weights=false (through sdpa) matches the explicit path", "[attention]") {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).add_bias_kv(true));
  mha.to(DType::Float64);
  const Tensor q = seq({4, 3, 8}, 0.1), k = seq({5, 3, 8}, 0.2, -0.7), v = seq({5, 3, 8}, 0.3);
  const Tensor mask = seq({4, 5}, 0.2);
  const auto [with_weights, w] = mha.forward(q, k, v, {}, true, mask);
  const auto [without, none] = mha.forward(q, k, v, {}, false, mask);
  REQUIRE(w.defined());
  REQUIRE_FALSE(none.defined());
  require_values(without, to_vector(with_weights), 1e-10);
}
