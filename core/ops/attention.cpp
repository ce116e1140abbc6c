// scaled_dot_product_attention front-end: PyTorch's checks, grouped-query
// head repetition, the choice between the fused CUDA kernel and the math path
// (a composition of ember ops), and the fused path's autograd node.
#include <ember/core/ops/attention.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include <ember/autograd/functions/attention.h>
#include <ember/autograd/node.h>
#include <ember/core/autocast.h>
#include <ember/core/determinism.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/nn_misc.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/softmax.h>
#include <ember/cuda/attention.h>

namespace ember {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

std::atomic<bool> flash_enabled{true};
std::atomic<bool> math_enabled{true};

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout_p,
                  bool is_causal, bool enable_gqa) {
  EMBER_CHECK(q.defined() && k.defined() && v.defined(), Error, kOp, ": expected defined query, key and value");
  EMBER_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), Error, kOp,
              ": expected query, key and value to have the same dtype, but got query ", dtype_name(q.dtype()),
              ", key ", dtype_name(k.dtype()), " and value ", dtype_name(v.dtype()));
  EMBER_CHECK(q.device() == k.device() && q.device() == v.device(), Error, kOp,
              ": expected query, key and value on the same device, but got query on ", q.device().str(), ", key on ",
              k.device().str(), " and value on ", v.device().str());
  EMBER_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, Error, kOp,
              ": expected query, key and value to be at least 2-dimensional, but got shapes ", q.shape_str(), ", ",
              k.shape_str(), " and ", v.shape_str());
  EMBER_CHECK(is_floating(q.dtype()), Error, kOp, ": expected floating point query, key and value, got ",
              dtype_name(q.dtype()));
  EMBER_CHECK(q.size(-1) == k.size(-1), Error, kOp, ": query's last dim (", q.size(-1),
              ") must equal key's (", k.size(-1), "): query ", q.shape_str(), ", key ", k.shape_str());
  EMBER_CHECK(k.size(-2) == v.size(-2), Error, kOp, ": key and value must have the same sequence length (dim -2): key ",
              k.shape_str(), ", value ", v.shape_str());
  EMBER_CHECK(dropout_p >= 0.0 && dropout_p <= 1.0, Error, kOp,
              ": dropout probability has to be between 0 and 1, but got ", dropout_p);
  if (mask.defined()) {
    EMBER_CHECK(!is_causal, Error, kOp, ": explicit attn_mask should not be set when is_causal=True");
    EMBER_CHECK(mask.dtype() == DType::Bool || mask.dtype() == DType::Float32 || mask.dtype() == q.dtype(), Error, kOp,
                ": expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask ",
                dtype_name(mask.dtype()), " and query ", dtype_name(q.dtype()));
    EMBER_CHECK(mask.device() == q.device(), Error, kOp, ": expected attn_mask on ", q.device().str(),
                " with query, but got it on ", mask.device().str());
    // The mask must broadcast against the scores [..., L, S].
    Shape scores = q.shape();
    scores.back() = k.size(-2);
    broadcast_shapes(scores, mask.shape(), kOp);
  }
  if (enable_gqa) {
    EMBER_CHECK(q.dim() >= 3 && k.dim() >= 3 && v.dim() >= 3, Error, kOp,
                ": enable_gqa=True needs a head dim (-3): query ", q.shape_str(), ", key ", k.shape_str(), ", value ",
                v.shape_str());
    const int64_t hq = q.size(-3), hk = k.size(-3), hv = v.size(-3);
    EMBER_CHECK(hk > 0 && hv > 0 && hq % hk == 0 && hq % hv == 0, Error, kOp,
                ": with enable_gqa=True the number of heads of key (", hk, ") and value (", hv,
                ") must divide the number of heads of query (", hq, ")");
  } else {
    // The batch dims broadcast (the math path's matmuls); say so naming this op.
    auto batch = [](const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); };
    broadcast_shapes(broadcast_shapes(batch(q), batch(k), kOp), batch(v), kOp);
  }
}

// key / value heads repeated to query's count: [..., Hk, S, E] -> [..., Hq, S, E],
// head h serving query heads h * g .. h * g + g - 1 (repeat_interleave).
Tensor repeat_heads(const Tensor& t, int64_t heads) {
  const int64_t h = t.size(-3);
  if (h == heads) return t;
  Shape expanded = t.shape();
  expanded.insert(expanded.end() - 2, heads / h);  // [..., Hk, g, S, E]
  Shape merged = t.shape();
  merged[merged.size() - 3] = heads;
  return reshape(expand(unsqueeze(t, -3), expanded), merged);
}

// The composition (PyTorch's math backend): float16/bfloat16 computed in float32.
Tensor math_attention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, const Tensor& mask_in,
                      double dropout_p, bool is_causal, double scale) {
  const DType dtype = q_in.dtype();
  const DType compute = is_half(dtype) ? DType::Float32 : dtype;
  const Tensor q = q_in.to(compute), k = k_in.to(compute), v = v_in.to(compute);
  const Device dev = q.device();
  const int64_t L = q.size(-2), S = k.size(-2);
  Tensor scores = matmul(mul(q, scalar_tensor(scale)), transpose(k, -2, -1));
  Tensor mask = mask_in;
  if (is_causal) {  // query i attends key j <= i
    const Tensor rows = unsqueeze(arange(0, L, 1, DType::Int64, dev), 1);
    const Tensor cols = unsqueeze(arange(0, S, 1, DType::Int64, dev), 0);
    mask = ge(rows, cols);
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (mask.defined()) {
    if (mask.dtype() == DType::Bool) scores = masked_fill(scores, logical_not(mask), scalar_tensor(-inf));
    else scores = add(scores, mask.to(compute));
  }
  Tensor weights;
  if (mask.defined() && !is_causal && S > 0) {
    // Rows that attend no key give zeros (PyTorch's safe softmax), with finite
    // gradients: their scores are replaced by zeros before the softmax.
    const Tensor dead = all(eq(scores.detach(), scalar_tensor(-inf)), {-1}, /*keepdim=*/true);
    const Tensor zero = scalar_tensor(0.0);
    weights = where(dead, zero, softmax(where(dead, zero, scores), -1));
  } else {
    weights = softmax(scores, -1);
  }
  if (dropout_p > 0.0) weights = dropout(weights, dropout_p, /*training=*/true);
  const Tensor out = matmul(weights, v);
  return out.to(dtype);
}

int64_t batch_count(const Tensor& t) {
  int64_t n = 1;
  for (int64_t i = 0; i + 2 < t.dim(); ++i) n *= t.size(i);
  return n;
}

// The stride of t's dims [begin, end) merged into one dim, or nothing when
// they do not merge (size-1 dims are skipped: their strides never matter;
// broadcast dims of stride 0 merge with each other).
std::optional<int64_t> merged_stride(const Tensor& t, int64_t begin, int64_t end) {
  int64_t stride = 0, span = 0;  // of the dims merged so far, innermost first; span 0: none yet
  for (int64_t d = end - 1; d >= begin; --d) {
    if (t.size(d) == 1) continue;
    if (span == 0) {
      stride = t.stride(d);
      span = t.size(d);
    } else if (t.stride(d) == stride * span) {
      span *= t.size(d);
    } else {
      return std::nullopt;
    }
  }
  return stride;
}

// The strides the kernels read t with when its batch dims are cut before dim
// `cut` (the operand's tensor left unset), or nothing when they cannot. Misaligned rows are refused rather than read with
// narrower loads: the kernels stage every tile with 16-byte loads, and a
// second, scalar staging path would cost another template instantiation (or a
// branch in the innermost loop) for layouts that only odd slicing produces;
// one copy of such an input is cheaper than the slower kernel it would need.
std::optional<cuda::FlashOperand> readable_operand(const Tensor& t, int64_t cut) {
  const int64_t batch_dims = t.dim() - 2;
  if (t.stride(-1) != 1 && t.size(-1) != 1) return std::nullopt;
  const std::optional<int64_t> outer = merged_stride(t, 0, cut), inner = merged_stride(t, cut, batch_dims);
  if (!outer || !inner) return std::nullopt;
  cuda::FlashOperand op{Tensor(), *outer, *inner, t.size(-2) == 1 ? 0 : t.stride(-2)};
  const int64_t bytes = static_cast<int64_t>(t.element_size());
  bool aligned = reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
  for (int64_t stride : {op.batch_stride, op.head_stride, op.row_stride}) aligned = aligned && stride * bytes % 16 == 0;
  if (!aligned) return std::nullopt;
  return op;
}

// `like`'s dims in memory order, outermost first, the last dim last.
Dims memory_order(const Tensor& like) {
  Dims order(static_cast<size_t>(like.dim() - 1));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return like.stride(a) > like.stride(b); });
  order.push_back(like.dim() - 1);
  return order;
}

Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal, double scale) {
  const int64_t n = batch_count(q);
  // q, k and v are read where they are (views included) and saved as given,
  // as PyTorch does: no contiguous copies, and the saved views' version
  // counters catch in-place changes before the backward.
  const FlashOperands in = flash_operands({q, k, v});
  const cuda::FlashOperand out = flash_output(q, q.dtype(), in.cut);
  Tensor lse = empty({n, q.size(-2)}, DType::Float32, q.device());
  cuda::flash_attention_forward(out, lse, in.operands[0], in.operands[1], in.operands[2], in.heads, scale,
                                is_causal);
  if (autograd::any_requires_grad({q, k, v})) {
    autograd::record("ScaledDotProductFlashAttentionBackward0", {q, k, v}, {out.tensor}, {q, k, v, out.tensor, lse},
                     autograd::functions::scaled_dot_product_flash_attention_backward(scale, is_causal));
  }
  return out.tensor;
}

}  // namespace

FlashOperands flash_operands(const std::vector<Tensor>& inputs) {
  EMBER_CHECK(!inputs.empty(), Error, kOp, ": flash_operands needs inputs (internal error)");
  const int64_t batch_dims = inputs[0].dim() - 2;
  for (const Tensor& t : inputs)
    EMBER_CHECK(t.dim() == batch_dims + 2 && std::equal(t.shape().begin(), t.shape().end() - 2,
                                                        inputs[0].shape().begin()),
                Error, kOp, ": the fused kernel's inputs must share their batch dims, got ", inputs[0].shape_str(),
                " and ", t.shape_str(), " (internal error)");
  int64_t best_cut = 0;
  size_t best_unreadable = inputs.size() + 1;
  for (int64_t cut = 0; cut <= batch_dims; ++cut) {
    size_t unreadable = 0;
    for (const Tensor& t : inputs) unreadable += readable_operand(t, cut) ? 0 : 1;
    if (unreadable < best_unreadable) {
      best_cut = cut;
      best_unreadable = unreadable;
    }
  }
  FlashOperands result;
  result.cut = best_cut;
  for (int64_t d = best_cut; d < batch_dims; ++d) result.heads *= inputs[0].size(d);
  for (const Tensor& t : inputs) {
    Tensor data = t.detach();
    std::optional<cuda::FlashOperand> op = readable_operand(data, best_cut);
    result.copied.push_back(!op);
    if (!op) {  // a fresh contiguous copy is readable at any cut (its allocation is aligned)
      data = data.contiguous();
      if (reinterpret_cast<uintptr_t>(data.data_ptr()) % 16 != 0) data = data.clone();  // an offset contiguous view
      op = readable_operand(data, best_cut);
      EMBER_CHECK(op.has_value(), Error, kOp, ": the fused kernel cannot read a contiguous ", data.shape_str(),
                  " copy (internal error)");
    }
    op->tensor = data;
    result.operands.push_back(*op);
  }
  return result;
}

cuda::FlashOperand flash_output(const Tensor& like, DType dtype, int64_t cut) {
  bool broadcast = false;
  for (int64_t d = 0; d < like.dim(); ++d) broadcast = broadcast || (like.size(d) > 1 && like.stride(d) == 0);
  if (!broadcast) {
    const Dims order = memory_order(like);
    Shape shape;
    Dims back(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      shape.push_back(like.size(order[i]));
      back[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
    }
    Tensor t = permute(empty(shape, dtype, like.device()), back);
    if (std::optional<cuda::FlashOperand> op = readable_operand(t, cut)) {
      op->tensor = t;
      return *op;
    }
  }
  Tensor t = empty(like.shape(), dtype, like.device());
  std::optional<cuda::FlashOperand> op = readable_operand(t, cut);
  EMBER_CHECK(op.has_value(), Error, kOp, ": the fused kernel cannot write a contiguous ", t.shape_str(),
              " output (internal error)");
  op->tensor = t;
  return *op;
}

void set_flash_sdp_enabled(bool enabled) { flash_enabled = enabled; }
bool flash_sdp_enabled() { return flash_enabled; }
void set_math_sdp_enabled(bool enabled) { math_enabled = enabled; }
bool math_sdp_enabled() { return math_enabled; }

std::string flash_attention_blocker(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal, bool enable_gqa) {
  (void)is_causal;
  if (!flash_sdp_enabled()) return "the flash path is disabled (ember.backends.cuda.enable_flash_sdp(False))";
  if (!query.device().is_cuda()) return str("the inputs are on ", query.device().str(), ", not on a CUDA device");
  if (query.dtype() != DType::Float16 && query.dtype() != DType::BFloat16)
    return str("the dtype is ", dtype_name(query.dtype()), ", not float16 or bfloat16");
  if (attn_mask.defined()) return "an attn_mask is given";
  if (dropout_p > 0.0) return "dropout_p > 0";
  if (deterministic_algorithms() && autograd::any_requires_grad({query, key, value}))
    return "ember.use_deterministic_algorithms(True) is on and the fused kernel's backward adds with atomics";
  const int64_t e = query.size(-1);
  if (e != value.size(-1)) return str("query's head size ", e, " differs from value's ", value.size(-1));
  if (e % 8 != 0 || e > 128 || e == 0) return str("the head size ", e, " is not a multiple of 8 up to 128");
  if (query.dim() != key.dim() || query.dim() != value.dim()) return "query, key and value differ in rank";
  for (int64_t i = 0; i + 2 < query.dim(); ++i) {
    const bool head_dim = i + 3 == query.dim();
    const int64_t hk = head_dim && enable_gqa ? query.size(i) : key.size(i);
    const int64_t hv = head_dim && enable_gqa ? query.size(i) : value.size(i);
    if (query.size(i) != hk || query.size(i) != hv)
      return str("the batch dims of query ", query.shape_str(), ", key ", key.shape_str(), " and value ",
                 value.shape_str(), " differ (broadcasting)");
  }
  if (query.numel() == 0 || key.numel() == 0) return "the inputs are empty";
  if (!cuda::flash_attention_supported(query.device().index, e))
    return "the GPU lacks bf16 tensor cores (compute capability < 8.0) or shared memory for the kernel";
  return "";
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa) {
  if (autocast::Scope ac{kOp, query, key, value, attn_mask}; ac)
    return scaled_dot_product_attention(ac[0], ac[1], ac[2], ac[3], dropout_p, is_causal, scale, enable_gqa);
  check_inputs(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa);
  const int64_t e = query.size(-1);
  // An empty head dim gives an infinite scale, as 1 / sqrt(0) does in PyTorch.
  const double s = scale ? *scale : (e > 0 ? 1.0 / std::sqrt(static_cast<double>(e)) : std::numeric_limits<double>::infinity());
  const std::string blocker =
      flash_attention_blocker(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa);
  Tensor k = key, v = value;
  if (enable_gqa) {
    k = repeat_heads(key, query.size(-3));
    v = repeat_heads(value, query.size(-3));
  }
  if (blocker.empty()) return flash_attention(query, k, v, is_causal, s);
  EMBER_CHECK(math_sdp_enabled(), Error, kOp, ": no available kernel: the fused flash kernel cannot run (", blocker,
              ") and the math path is disabled (ember.backends.cuda.enable_math_sdp(True) turns it back on)");
  return math_attention(query, k, v, attn_mask, dropout_p, is_causal, s);
}

std::vector<Tensor> scaled_dot_product_flash_attention_backward(const Tensor& grad_out, const Tensor& query,
                                                                const Tensor& key, const Tensor& value,
                                                                const Tensor& out, const Tensor& logsumexp,
                                                                double scale, bool is_causal) {
  EMBER_CHECK(grad_out.shape() == out.shape() && out.shape() == query.shape(), Error, kOp,
              ": flash backward: grad_out ", grad_out.shape_str(), " does not match the output ", out.shape_str());
  const int64_t n = batch_count(query), L = query.size(-2), E = query.size(-1);
  // grad_out usually arrives strided (from y.transpose(1, 2).contiguous().view(B, T, C)): read in place too.
  const FlashOperands in = flash_operands({grad_out.to(query.dtype()), query, key, value, out});
  // The gradients laid out like their inputs (GPT-2's then reshape to [B, T, C] without copies).
  const cuda::FlashOperand gk = flash_output(key, key.dtype(), in.cut), gv = flash_output(value, value.dtype(), in.cut);
  Tensor gq_acc = zeros({n, L, E}, DType::Float32, query.device());
  Tensor delta = empty({n, L}, DType::Float32, query.device());
  cuda::flash_attention_backward(gq_acc, gk, gv, delta, in.operands[0], in.operands[1], in.operands[2],
                                 in.operands[3], in.operands[4], logsumexp.contiguous(), in.heads, scale, is_causal);
  Tensor gq = flash_output(query, query.dtype(), in.cut).tensor;
  gq.copy_(gq_acc.view(query.shape()));  // the float32 sums rounded to query's dtype
  return {gq, gk.tensor, gv.tensor};
}

}  // namespace ember
