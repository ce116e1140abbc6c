// Autocast state and PyTorch's op lists (torch.amp "Autocast Op Reference"),
// restricted to the ops ember has. CUDA and the CPU have different lists:
// the CPU runs softmax, norms and elementwise math natively in bfloat16, so
// only losses (and prod) go to float32 there.
#include <ember/core/autocast.h>

#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>

namespace ember::autocast {
namespace {

enum class Policy : int8_t {
  None,            // not autocast on this device type
  LowerPrecision,  // eligible inputs to the autocast dtype
  Float32,         // eligible inputs to float32
  Float32InOp,     // float32, computed by the op from its inputs as they are (Scope::float32_in_op)
  Promote,         // eligible inputs to the widest eligible dtype
  Banned,          // refused: unsafe in float16 (binary_cross_entropy on CUDA)
};

struct Policies {
  Policy cpu, cuda;
};

const std::unordered_map<std::string_view, Policies>& op_lists() {
  using P = Policy;
  static const std::unordered_map<std::string_view, Policies> lists = {
      // lower precision on both
      {"matmul", {P::LowerPrecision, P::LowerPrecision}},
      {"mm", {P::LowerPrecision, P::LowerPrecision}},
      {"bmm", {P::LowerPrecision, P::LowerPrecision}},
      {"addmm", {P::LowerPrecision, P::LowerPrecision}},
      {"conv1d", {P::LowerPrecision, P::LowerPrecision}},
      {"conv2d", {P::LowerPrecision, P::LowerPrecision}},
      {"conv_transpose1d", {P::LowerPrecision, P::LowerPrecision}},
      {"conv_transpose2d", {P::LowerPrecision, P::LowerPrecision}},
      {"mv", {P::None, P::LowerPrecision}},
      {"scaled_dot_product_attention", {P::LowerPrecision, P::LowerPrecision}},
      // float32: CUDA only (the CPU computes these natively in bfloat16)
      {"exp", {P::None, P::Float32}},
      {"expm1", {P::None, P::Float32}},
      {"log", {P::None, P::Float32}},
      {"log1p", {P::None, P::Float32}},
      {"reciprocal", {P::None, P::Float32}},
      {"rsqrt", {P::None, P::Float32}},
      {"pow", {P::None, P::Float32}},
      {"log2", {P::None, P::Float32}},
      {"log10", {P::None, P::Float32}},
      {"sinh", {P::None, P::Float32}},
      {"cosh", {P::None, P::Float32}},
      {"tan", {P::None, P::Float32}},
      {"asin", {P::None, P::Float32}},
      {"acos", {P::None, P::Float32}},
      {"erfinv", {P::None, P::Float32}},
      {"softplus", {P::None, P::Float32}},
      {"sum", {P::None, P::Float32}},
      {"cumsum", {P::None, P::Float32}},
      {"norm", {P::None, P::Float32}},
      {"softmax", {P::None, P::Float32}},
      {"log_softmax", {P::None, P::Float32}},
      {"layer_norm", {P::None, P::Float32}},
      {"group_norm", {P::None, P::Float32}},
      {"rms_norm", {P::None, P::Float32}},
      // float32 on both
      {"prod", {P::Float32, P::Float32}},
      {"nll_loss", {P::Float32, P::Float32}},
      // Its fused kernel reads half logits in float32 and keeps a float32
      // loss: no float32 copy of the logits (twice their size; GPT-2's are
      // [8192, 50257]) is made and kept for the backward.
      {"cross_entropy", {P::Float32InOp, P::Float32InOp}},
      {"mse_loss", {P::Float32, P::Float32}},
      {"l1_loss", {P::Float32, P::Float32}},
      {"smooth_l1_loss", {P::Float32, P::Float32}},
      {"kl_div", {P::Float32, P::Float32}},
      {"binary_cross_entropy_with_logits", {P::Float32, P::Float32}},
      {"binary_cross_entropy", {P::Float32, P::Banned}},
      // promote (cat, stack and the elementwise ops already promote by themselves)
      {"dot", {P::None, P::Promote}},
  };
  return lists;
}

// A cast of a float32 parameter (a leaf requiring grad) or of a view of one
// (F.linear passes weight.t()): the same geometry at the same version of the
// same parameter reuses the cast, and its autograd history, within a region.
struct CacheEntry {
  Tensor source;  // kept alive so the parameter's address cannot be reused
  Tensor cast;
  uint32_t version;
};

struct State {
  bool enabled[2] = {false, false};                    // CPU, CUDA
  DType dtype[2] = {DType::BFloat16, DType::Float16};  // CPU, CUDA
  bool cache_enabled = true;
  bool in_op = false;  // an autocast op is running: nested ops are not autocast
  int64_t nesting = 0;
  std::unordered_map<const TensorImpl*, std::vector<CacheEntry>> cache;  // by parameter
  size_t cache_entries = 0;
  int64_t cache_casts = 0;
};

thread_local State state;

int index(DeviceType t) { return t == DeviceType::CUDA ? 1 : 0; }

bool eligible(const Tensor& t, DeviceType type) {
  return t.defined() && t.device().type == type && is_floating(t.dtype()) && t.dtype() != DType::Float64;
}

// The parameter behind t when t's cast may be cached, else nullptr.
const TensorImpl* cache_key(const Tensor& t, DType to) {
  if (!state.cache_enabled || to == DType::Float32 || t.dtype() != DType::Float32 || !t.requires_grad() ||
      !autograd::grad_enabled()) {
    return nullptr;
  }
  if (t.is_leaf()) return t.impl();
  const auto& base = t.impl()->view_base;
  return base && Tensor(base).is_leaf() && Tensor(base).requires_grad() ? base.get() : nullptr;
}

bool same_geometry(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.strides() == b.strides() && a.storage_offset() == b.storage_offset();
}

Tensor cast(const Tensor& t, DType to) {
  if (t.dtype() == to) return t;
  const TensorImpl* key = cache_key(t, to);
  if (key == nullptr) return t.to(to);
  std::vector<CacheEntry>& entries = state.cache[key];
  for (const CacheEntry& e : entries) {
    if (e.cast.dtype() == to && e.version == t.version() && same_geometry(e.source, t)) return e.cast;
  }
  Tensor c = t.to(to);
  entries.push_back(CacheEntry{t, c, t.version()});
  ++state.cache_entries;
  ++state.cache_casts;
  return c;
}

}  // namespace

bool is_enabled(DeviceType type) { return state.enabled[index(type)]; }
void set_enabled(DeviceType type, bool enabled) { state.enabled[index(type)] = enabled; }
DType get_dtype(DeviceType type) { return state.dtype[index(type)]; }
void set_dtype(DeviceType type, DType dtype) {
  EMBER_CHECK(is_floating(dtype), ValueError, "autocast: dtype must be a floating point type, got ",
              dtype_name(dtype));
  state.dtype[index(type)] = dtype;
}
bool is_cache_enabled() { return state.cache_enabled; }
void set_cache_enabled(bool enabled) { state.cache_enabled = enabled; }

int64_t increment_nesting() { return ++state.nesting; }
int64_t decrement_nesting() { return --state.nesting; }
void clear_cache() {
  state.cache.clear();
  state.cache_entries = 0;
}
size_t cache_size() { return state.cache_entries; }
int64_t cache_casts() { return state.cache_casts; }

bool any_active() { return (state.enabled[0] || state.enabled[1]) && !state.in_op; }

void Scope::enter(const char* op, const Tensor* const* inputs, size_t n) {
  DeviceType type = DeviceType::CPU;
  for (size_t i = 0; i < n; ++i)
    if (inputs[i]->defined() && inputs[i]->device().is_cuda()) type = DeviceType::CUDA;
  if (!is_enabled(type)) return;
  const auto it = op_lists().find(op);
  if (it == op_lists().end()) return;
  const Policy policy = type == DeviceType::CUDA ? it->second.cuda : it->second.cpu;
  if (policy == Policy::None) return;
  EMBER_CHECK(policy != Policy::Banned, Error, op,
              ": unsafe to autocast: float16 may overflow here. Use binary_cross_entropy_with_logits "
              "(or BCEWithLogitsLoss), which combines the sigmoid and the loss and is safe to autocast, "
              "or run this op outside autocast on float32 inputs");
  if (policy == Policy::Float32InOp) {
    for (size_t i = 0; i < n; ++i) inputs_.push_back(*inputs[i]);  // the handles: no tensor is copied
    float32_in_op_ = true;
    state.in_op = true;
    active_ = true;
    return;
  }
  DType to = policy == Policy::Float32 ? DType::Float32 : get_dtype(type);
  if (policy == Policy::Promote) {
    bool first = true;
    for (size_t i = 0; i < n; ++i) {
      if (!eligible(*inputs[i], type)) continue;
      to = first ? inputs[i]->dtype() : promote_types(to, inputs[i]->dtype());
      first = false;
    }
  }
  inputs_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = *inputs[i];
    inputs_.push_back(eligible(t, type) ? cast(t, to) : t);
  }
  state.in_op = true;
  active_ = true;
}

Scope::~Scope() {
  if (active_) state.in_op = false;
}

}  // namespace ember::autocast
