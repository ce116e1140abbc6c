// scaled_dot_product_attention from C++: values against an explicit
// composition, the causal mask's top-left alignment, gqa, gradients, the sdp
// switches and the errors naming the op. (The fused CUDA kernel is tested from
// Python, tests/python/test_cuda_attention.py, on a GPU.)
#include <cmath>
#include <cstdint>
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

// flash_operands: how the fused kernels read their inputs (host logic, checked on CPU tensors).
namespace {

bool same_data(const cuda::FlashOperand& op, const Tensor& t) { return op.tensor.data_ptr() == t.data_ptr(); }

void require_strides(const cuda::FlashOperand& op, int64_t batch, int64_t head, int64_t row) {
  INFO("strides " << op.batch_stride << ", " << op.head_stride << ", " << op.row_stride);
  REQUIRE(op.batch_stride == batch);
  REQUIRE(op.head_stride == head);
  REQUIRE(op.row_stride == row);
}

}  // namespace

TEST_CASE("flash_operands: GPT-2's views are read in place", "[attention][flash_layout]") {
  const int64_t B = 2, T = 5, H = 3, D = 8, C = H * D;
  const Tensor qkv = empty({B, T, 3 * C}, DType::BFloat16, kCPU);
  const std::vector<Tensor> parts = split(qkv, C, 2);
  std::vector<Tensor> qkv_heads;
  for (const Tensor& p : parts) qkv_heads.push_back(transpose(view(p, {B, T, H, D}), 1, 2));  // [B, H, T, D]
  // The gradient reaching y = attention(...) from y.transpose(1, 2).contiguous().view(B, T, C).
  const Tensor grad_out = transpose(empty({B, T, H, D}, DType::BFloat16, kCPU), 1, 2);
  const Tensor out = empty({B, H, T, D}, DType::BFloat16, kCPU);
  const FlashOperands in = flash_operands({grad_out, qkv_heads[0], qkv_heads[1], qkv_heads[2], out});
  REQUIRE(in.heads == H);
  for (size_t i = 0; i < 5; ++i) REQUIRE_FALSE(in.copied[i]);
  REQUIRE(same_data(in.operands[0], grad_out));
  require_strides(in.operands[0], T * C, D, C);
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE(same_data(in.operands[1 + i], qkv_heads[i]));
    require_strides(in.operands[1 + i], T * 3 * C, D, 3 * C);
  }
  require_strides(in.operands[4], H * T * D, T * D, D);
}

TEST_CASE("flash_operands: batch dims cut where every input merges, else copies", "[attention][flash_layout]") {
  // [A, B, H, L, E] whose A does not merge with (B, H) (a gap), but B and H do: cut after A.
  const int64_t A = 2, B = 3, H = 2, L = 4, E = 8;
  const Tensor gapped = view(narrow(empty({A, B * H + 1, L, E}, DType::Float16, kCPU), 1, 0, B * H), {A, B, H, L, E});
  const Tensor plain = empty({A, B, H, L, E}, DType::Float16, kCPU);
  FlashOperands in = flash_operands({gapped, plain});
  REQUIRE(in.heads == B * H);
  REQUIRE_FALSE(in.copied[0]);
  REQUIRE_FALSE(in.copied[1]);
  require_strides(in.operands[0], (B * H + 1) * L * E, L * E, E);
  require_strides(in.operands[1], B * H * L * E, L * E, E);

  // [A, B, H] from an [A, H, B] buffer: no cut merges both groups, so it is copied (contiguous, heads split
  // anywhere); the other input stays in place.
  const Tensor scrambled = permute(empty({A, H, B, L, E}, DType::Float16, kCPU), {0, 2, 1, 3, 4});
  in = flash_operands({scrambled, plain});
  REQUIRE(in.copied[0]);
  REQUIRE_FALSE(in.copied[1]);
  REQUIRE(in.operands[0].tensor.is_contiguous());
  REQUIRE(in.operands[0].tensor.shape() == scrambled.shape());
  REQUIRE(same_data(in.operands[1], plain));

  // Heads outside the batch ([H, B] transposed): one batch dim each side of the cut.
  const Tensor heads_outer = transpose(empty({H, B, L, E}, DType::BFloat16, kCPU), 0, 1);
  in = flash_operands({heads_outer});
  REQUIRE(in.heads == H);
  REQUIRE_FALSE(in.copied[0]);
  require_strides(in.operands[0], L * E, B * L * E, E);

  // A key broadcast over heads (stride 0) is read in place; 2-D and 3-D inputs work.
  const Tensor shared_head = expand(empty({B, 1, L, E}, DType::BFloat16, kCPU), {B, H, L, E});
  in = flash_operands({shared_head});
  REQUIRE_FALSE(in.copied[0]);
  REQUIRE(in.operands[0].head_stride == 0);
  in = flash_operands({empty({L, E}, DType::BFloat16, kCPU)});
  REQUIRE(in.heads == 1);
  require_strides(in.operands[0], 0, 0, E);
  in = flash_operands({empty({B, 1, E}, DType::BFloat16, kCPU)});  // one row: its stride does not matter
  require_strides(in.operands[0], 0, E, 0);
}

TEST_CASE("flash_operands: misaligned rows and a strided last dim are copied", "[attention][flash_layout]") {
  const int64_t L = 4, E = 8;
  // Rows of 9 elements (18 bytes): not 16-byte aligned.
  const Tensor odd_rows = narrow(empty({2, L, E + 1}, DType::BFloat16, kCPU), 2, 0, E);
  // Contiguous but starting one element (2 bytes) into its buffer.
  const Tensor shifted = view(narrow(empty({L * E + 1}, DType::BFloat16, kCPU), 0, 1, L * E), {1, L, E});
  // Columns strided.
  const Tensor columns = transpose(empty({2, E, E}, DType::BFloat16, kCPU), 1, 2);
  // Rows padded to 16 elements: aligned, read in place.
  const Tensor padded = narrow(empty({2, L, 2 * E}, DType::BFloat16, kCPU), 2, 0, E);
  const FlashOperands in = flash_operands({odd_rows, columns.narrow(1, 0, L), padded});
  REQUIRE(in.copied == std::vector<bool>{true, true, false});
  for (size_t i = 0; i < 2; ++i) {
    const cuda::FlashOperand& op = in.operands[i];
    REQUIRE(op.tensor.is_contiguous());
    REQUIRE(reinterpret_cast<uintptr_t>(op.tensor.data_ptr()) % 16 == 0);
    require_strides(op, 0, L * E, E);  // one cut: all batch dims in the heads group
  }
  require_strides(in.operands[2], 0, L * 2 * E, 2 * E);
  REQUIRE(in.heads == 2);
  const FlashOperands alone = flash_operands({shifted});
  REQUIRE(alone.copied[0]);
  REQUIRE(reinterpret_cast<uintptr_t>(alone.operands[0].tensor.data_ptr()) % 16 == 0);
  // Copies hold the same values.
  const Tensor src = narrow(arange(0, 2 * L * (E + 1), 1, DType::Float32, kCPU).view({2, L, E + 1}), 2, 0, E);
  const FlashOperands copied = flash_operands({src});
  REQUIRE(copied.copied[0]);
  REQUIRE(to_vector(copied.operands[0].tensor) == to_vector(src));
}

TEST_CASE("flash_output: outputs follow their input's memory order", "[attention][flash_layout]") {
  const int64_t B = 2, T = 5, H = 3, D = 8, C = H * D;
  const Tensor qkv = empty({B, T, 3 * C}, DType::BFloat16, kCPU);
  const Tensor q = transpose(view(narrow(qkv, 2, 0, C), {B, T, H, D}), 1, 2);
  const FlashOperands in = flash_operands({q});
  // GPT-2's q: the output's memory is [B, T, H, D], so y.transpose(1, 2) is contiguous.
  const cuda::FlashOperand out = flash_output(q, DType::BFloat16, in.cut);
  REQUIRE(out.tensor.shape() == q.shape());
  REQUIRE(transpose(out.tensor, 1, 2).is_contiguous());
  require_strides(out, T * C, D, C);
  // A contiguous input gives a contiguous output; float32 is allowed for the dtype.
  const Tensor plain = empty({B, H, T, D}, DType::BFloat16, kCPU);
  const cuda::FlashOperand plain_out = flash_output(plain, DType::Float32, flash_operands({plain}).cut);
  REQUIRE(plain_out.tensor.is_contiguous());
  REQUIRE(plain_out.tensor.dtype() == DType::Float32);
  // Heads outside the batch: the same order, [H, B, T, D] in memory.
  const Tensor heads_outer = transpose(empty({H, B, T, D}, DType::Float16, kCPU), 0, 1);
  const cuda::FlashOperand ho = flash_output(heads_outer, DType::Float16, flash_operands({heads_outer}).cut);
  REQUIRE(transpose(ho.tensor, 0, 1).is_contiguous());
  require_strides(ho, T * D, B * T * D, D);
  // A broadcast key: a contiguous output (no two elements may share an address).
  const Tensor shared_head = expand(empty({B, 1, T, D}, DType::BFloat16, kCPU), {B, H, T, D});
  const cuda::FlashOperand sh = flash_output(shared_head, DType::BFloat16, flash_operands({shared_head}).cut);
  REQUIRE(sh.tensor.is_contiguous());
  REQUIRE(sh.head_stride == T * D);
  // An order the cut cannot address falls back to contiguous: [A, B, H] over [A, H, B] memory with the
  // batch dims cut after A for another input, so (B, H) must merge.
  const int64_t A = 2;
  const Tensor scrambled = permute(empty({A, H, B, T, D}, DType::Float16, kCPU), {0, 2, 1, 3, 4});
  const cuda::FlashOperand sc = flash_output(scrambled, DType::Float16, 1);
  REQUIRE(sc.tensor.is_contiguous());
  require_strides(sc, B * H * T * D, T * D, D);
}
