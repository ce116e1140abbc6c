#include <ember/autograd/node.h>

#include <atomic>
#include <limits>

#include <ember/autograd/anomaly_mode.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/meta.h>
#include <ember/autograd/packed_save.h>
#include <ember/autograd/sequence.h>
#include <ember/core/error.h>
#include <ember/autograd/functions/common.h>
#include <ember/autograd/functions/copy.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>

namespace ember::autograd {

namespace {
std::atomic<uint64_t> g_sequence{0};
const std::shared_ptr<const SavedTensorHooks> kNoHooks;

std::string tensor_label(const Tensor& t) {
  return str("[", dtype_name(t.dtype()), " ", shape_str(t.shape()), "]");
}

// Drops the references in `pending`; a node whose last reference this is
// hands its own children over first, so its destructor has nothing to recurse
// into. Depth stays constant however long the chain is.
void teardown(std::vector<std::shared_ptr<Node>>& pending) {
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    if (n && n.use_count() == 1) n->steal_children(pending);
    n.reset();
  }
}
}  // namespace

Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending;
  Node::steal_children(pending);
  teardown(pending);
}

void Node::steal_children(std::vector<std::shared_ptr<Node>>& out) {
  for (auto& e : next_edges) {
    if (e.node) out.push_back(std::move(e.node));
  }
  next_edges.clear();
}

FunctionNode::~FunctionNode() {
  std::vector<std::shared_ptr<Node>> pending;
  steal_children(pending);
  teardown(pending);
}

void FunctionNode::steal_children(std::vector<std::shared_ptr<Node>>& out) {
  Node::steal_children(out);
  for (auto& s : saved) s.steal_grad_fn(out);
}

void SavedTensor::steal_grad_fn(std::vector<std::shared_ptr<Node>>& out) {
  if (packed_ && packed_.use_count() == 1) {
    if (packed_->grad_fn) out.push_back(std::move(packed_->grad_fn));
    if (packed_->accumulator) out.push_back(std::move(packed_->accumulator));
  }
  if (!data_.defined() || data_.impl_ptr().use_count() != 1) return;
  auto* m = meta_if(data_);
  if (m && m->grad_fn) out.push_back(std::move(m->grad_fn));
  if (m && m->grad.defined() && m->grad.impl_ptr().use_count() == 1) {
    auto* gm = meta_if(m->grad);
    if (gm && gm->grad_fn) out.push_back(std::move(gm->grad_fn));
  }
}

SavedTensor::SavedTensor(const Tensor& t, bool is_output, const std::shared_ptr<const SavedTensorHooks>& hooks)
    : is_output_(is_output) {
  if (!t.defined()) return;
  defined_ = true;
  version_ = t.version();
  requires_grad_ = t.requires_grad();
  if (is_output) output_nr_ = meta_if(t) ? meta_if(t)->output_nr : 0;
  // Python numbers made into tensors are not the user's to see (as in torch).
  if (hooks && !t.impl()->wrapped_number) {
    pack(t, hooks);
  } else if (is_output) {
    // Keep the data without the autograd meta that points back at the owner.
    data_ = make_view(t, t.shape(), t.strides(), t.storage_offset());
  } else {
    data_ = t;
  }
}

void SavedTensor::pack(const Tensor& t, const std::shared_ptr<const SavedTensorHooks>& hooks) {
  auto p = std::make_shared<PackedSave>();
  p->hooks = hooks;
  p->shape = t.shape();
  p->dtype = t.dtype();
  p->device = t.device();
  p->original = t.impl_ptr();
  if (!is_output_ && requires_grad_) {
    // The unpacked tensor is a new one: it takes over this one's place in the
    // graph, so a double backward still reaches it.
    const bool has_history = meta_if(t)->grad_fn != nullptr;
    Edge e = gradient_edge(t);
    (has_history ? p->grad_fn : p->accumulator) = std::move(e.node);
    output_nr_ = e.input_nr;
  }
  {
    NoGradGuard no_grad;
    p->value = hooks->pack(t);
  }
  EMBER_CHECK(t.version() == version_, Error,
              "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
              "cannot be modified by in-place operations as this can lead to unexpected side-effects.");
  packed_ = std::move(p);
}

void SavedTensor::throw_modified(const Tensor& t, const std::shared_ptr<Node>& owner) const {
  throw Error(str("one of the variables needed for gradient computation has been modified by an "
                  "inplace operation: ", tensor_label(t), ", which is ",
                  is_output_ ? str("output ", output_nr_, " of ") : std::string("an input of "),
                  owner->name(), ", is at version ", t.version(), "; expected version ", version_,
                  " instead. Hint: replace the in-place operation (such as x.add_(...) or x[...] = ...) "
                  "with its out-of-place form, or clone the tensor before modifying it."));
}

Tensor SavedTensor::unpack(const std::shared_ptr<Node>& owner) const {
  if (!defined_) return Tensor();
  if (released_) {
    throw Error(
        "Trying to backward through the graph a second time (or directly access saved tensors after "
        "they have already been freed). Saved intermediate values of the graph are freed when you call "
        ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
        "graph a second time or if you need to access saved tensors after calling backward.");
  }
  if (packed_) return unpack_packed(owner);
  if (data_.version() != version_) throw_modified(data_, owner);
  if (!is_output_) return data_;
  Tensor t = make_view(data_, data_.shape(), data_.strides(), data_.storage_offset());
  if (requires_grad_) {
    auto& m = meta(t);
    m.requires_grad = true;
    m.grad_fn = owner;
    m.output_nr = output_nr_;
  }
  return t;
}

Tensor SavedTensor::unpack_packed(const std::shared_ptr<Node>& owner) const {
  const PackedSave& p = *packed_;
  const Tensor r = p.hooks->unpack(p.value);
  EMBER_CHECK(r.defined(), TypeError, owner->name(), ": the saved tensor unpack hook returned no tensor");
  if (r.shape() != p.shape || r.dtype() != p.dtype || r.device() != p.device) {
    throw Error(str(owner->name(), ": the saved tensor unpack hook returned a ", dtype_name(r.dtype()), " tensor of "
                    "shape ", shape_str(r.shape()), " on ", r.device().str(), ", but the tensor saved was ",
                    dtype_name(p.dtype), " of shape ", shape_str(p.shape), " on ", p.device.str(),
                    "; unpack_hook must return a tensor with the saved tensor's shape, dtype and device"));
  }
  // torch skips the version check under hooks; ember keeps it whenever the
  // unpacked tensor still is the saved memory (a copy is a snapshot, and fine).
  if (auto orig = p.original.lock(); orig && orig->storage.is_same(r.storage()) && r.version() != version_) {
    throw_modified(r, owner);
  }
  // A new tensor, so the hook's result keeps its own autograd state.
  Tensor t = make_view(r, r.shape(), r.strides(), r.storage_offset());
  if (!requires_grad_) return t;
  auto& m = meta(t);
  m.requires_grad = true;
  if (is_output_ || p.grad_fn) {
    m.grad_fn = is_output_ ? owner : p.grad_fn;
    m.output_nr = output_nr_;
  } else {
    m.grad_accumulator = p.accumulator;
  }
  return t;
}

TensorList FunctionNode::apply(const TensorList& grads) {
  TensorList unpacked;
  unpacked.reserve(saved.size());
  auto self = shared_from_this();
  for (const auto& s : saved) unpacked.push_back(s.unpack(self));
  return vjp_(grads, unpacked, needs_grad);
}

void FunctionNode::release() {
  for (auto& s : saved) s.release();
}

TensorList AccumulateGrad::apply(const TensorList& grads) {
  Tensor leaf(leaf_);
  Tensor g = grads[0];
  if (!g.defined()) return {};
  decltype(AutogradMeta::post_accumulate_hooks) post_hooks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& m = meta(leaf);  // its hooks already ran in the engine
    if (!grad_enabled()) {
      // The graph is not needed: own a plain contiguous buffer that later
      // steps can add into in place.
      if (!g.is_contiguous() || g.storage().use_count() > 1 || g.requires_grad()) g = g.detach().clone();
    }
    if (!m.grad.defined()) {
      m.grad = g;
    } else if (grad_enabled()) {
      m.grad = add(m.grad, g);
    } else {
      m.grad.add_(g);
    }
    post_hooks = m.post_accumulate_hooks;  // a copy: a hook may remove itself
  }
  for (auto& [id, hook] : post_hooks) hook(leaf);
  return {};
}

bool any_requires_grad(const TensorList& inputs) {
  if (!grad_enabled()) return false;
  for (const auto& t : inputs) {
    if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

namespace {
void refresh_view_history(const Tensor& view);
}  // namespace

Edge gradient_edge(const Tensor& t) {
  auto* m = meta_if(t);
  if (!m || !m->requires_grad) return {};
  if (m->grad_fn && t.impl()->view_base && m->history_version != t.version()) refresh_view_history(t);
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  auto acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    // Run as soon as ready (the engine runs the highest first): hooks on the
    // leaf's .grad, such as DDP's, then see each gradient early in backward.
    acc->sequence_nr = std::numeric_limits<uint64_t>::max();
    acc->outputs.push_back({t.shape(), t.dtype(), t.device()});
    m->grad_accumulator = acc;
  }
  return {acc, 0};
}

uint64_t next_sequence_nr() { return g_sequence.load(); }

void record(const char* name, const TensorList& inputs, const TensorList& outputs, const TensorList& saved,
            Vjp vjp, size_t n_hookable) {
  for (const auto& s : saved) {
    EMBER_CHECK(!s.defined() || !s.is_inference(), Error, name,
                ": inference tensors cannot be saved for backward. A tensor made under ember.inference_mode() "
                "is used in a computation autograd records: make it outside inference mode, or clone it outside "
                "(x.clone()), or use ember.no_grad() instead of ember.inference_mode()");
  }
  auto node = std::make_shared<FunctionNode>(name, std::move(vjp));
  node->sequence_nr = g_sequence.fetch_add(1);
  node->next_edges.reserve(inputs.size());
  node->needs_grad.reserve(inputs.size());
  for (const auto& in : inputs) {
    Edge e = in.defined() ? gradient_edge(in) : Edge{};
    node->needs_grad.push_back(e.valid());
    node->next_edges.push_back(std::move(e));
  }
  uint32_t nr = 0;
  for (const auto& out : outputs) {
    node->outputs.push_back({out.shape(), out.dtype(), out.device()});
    // Only floating and complex outputs carry gradients (indices from max() do not).
    if (is_differentiable(out.dtype())) {
      auto& m = meta(out);
      m.requires_grad = true;
      m.grad_fn = node;
      m.output_nr = nr;
      m.history_version = out.version();
    }
    ++nr;
  }
  // After the outputs are marked, so saved outputs remember their history.
  // With no saved-tensor hooks pushed anywhere this is one relaxed atomic
  // load per node; otherwise one thread-local lookup per node.
  const auto& hooks = saved.empty() || !any_saved_tensor_hooks() ? kNoHooks : current_saved_tensor_hooks();
  node->saved.reserve(saved.size());
  for (size_t i = 0; i < saved.size(); ++i) {
    const Tensor& s = saved[i];
    bool is_output = false;
    for (const auto& o : outputs) is_output = is_output || (s.defined() && s.is_same(o));
    node->saved.emplace_back(s, is_output, i < n_hookable ? hooks : kNoHooks);
  }
  if (anomaly_enabled()) anomaly_remember(node);
}

namespace {

bool is_grad_leaf(const Tensor& t) {
  auto* m = meta_if(t);
  return m && m->requires_grad && !m->grad_fn;
}

// Flat indices into the (contiguous) base of the view's elements.
Tensor view_positions(const Tensor& view, const Tensor& base) {
  EMBER_CHECK(base.is_contiguous(), NotImplementedError,
              "in-place write through a view of a non-contiguous tensor that requires grad is not supported "
              "yet; make the base contiguous (or clone() the view) first");
  NoGradGuard no_grad;
  const Tensor all = arange(0, base.numel(), 1, DType::Int64, base.device());
  return make_view(all, view.shape(), view.strides(), view.storage_offset() - base.storage_offset())
      .contiguous()
      .reshape({-1});
}

// The view read back out of its base's current history.
void read_view_from_base(const Tensor& view, const Tensor& base, const Tensor& positions) {
  record("AsStridedBackward0", {base}, {view}, {}, functions::view_of_base_backward(positions, base.shape()));
}

void refresh_view_history(const Tensor& view) {
  Tensor base(view.impl()->view_base);
  if (!base.requires_grad() || !base.is_contiguous()) return;
  read_view_from_base(view, base, view_positions(view, base));
}

// self, a view of `base`, was written in place with `result` (undefined: a
// constant). base's history becomes "old base outside the view, result
// inside" (CopySlices), and the view is read back out of the new base.
void rebase_view(const Tensor& self, const Tensor& base, const Tensor& result) {
  const Tensor positions = view_positions(self, base);
  Tensor keep;
  {
    NoGradGuard no_grad;
    keep = ones({base.numel()}, base.dtype(), base.device());
    make_view(keep, self.shape(), self.strides(), self.storage_offset() - base.storage_offset()).fill_(0);
    keep = keep.reshape(base.shape());
  }
  record("CopySlices", {base, result}, {base}, {}, functions::copy_slices_backward(keep, positions, self.shape()));
  read_view_from_base(self, base, positions);
}

}  // namespace

namespace {
[[noreturn]] void refuse_retyped_write(const char* op) {
  throw Error(str(op, ": in-place writes through view_as_real / view_as_complex / .real / .imag views are not "
                      "supported when autograd records them; compute the new value out of place instead "
                      "(e.g. ember.complex(re, im))"));
}
}  // namespace

void check_inplace(const Tensor& self, const char* op) {
  if (!grad_enabled()) return;
  const auto& owner = self.impl()->view_base;
  if ((self.impl()->retyped_view && self.requires_grad()) ||
      (owner && owner->retyped_view && Tensor(owner).requires_grad())) {
    refuse_retyped_write(op);
  }
  if (is_grad_leaf(self)) {
    throw Error(str(op, ": a leaf Variable that requires grad is being used in an in-place operation. "
                        "Wrap the update in `with ember.no_grad():` or operate on x.detach()."));
  }
  const auto& base = self.impl()->view_base;
  if (base && is_grad_leaf(Tensor(base))) {
    throw Error(str(op, ": a view of a leaf Variable that requires grad is being used in an in-place operation. "
                        "Wrap the update in `with ember.no_grad():` or clone() the leaf first."));
  }
}

void rebase_history(const Tensor& self, const Tensor& result) {
  if (!grad_enabled()) return;
  const bool result_grad = result.defined() && result.requires_grad();
  if (self.impl()->retyped_view && result_grad) refuse_retyped_write("in-place op");
  if (const auto& base_impl = self.impl()->view_base) {
    Tensor base(base_impl);
    if ((result_grad || base.requires_grad()) && base_impl->retyped_view) refuse_retyped_write("in-place op");
    if (result_grad || base.requires_grad()) rebase_view(self, base, result);
    return;
  }
  if (result_grad) {
    auto* rm = meta_if(result);
    auto& m = meta(self);
    m.requires_grad = true;
    m.grad_fn = rm->grad_fn;
    m.output_nr = rm->output_nr;
    m.history_version = self.version();
  } else if (self.requires_grad() && !is_grad_leaf(self)) {
    // Overwritten with a constant: the old history gets no gradient.
    record("FillBackward0", {}, {self}, {}, functions::zero_backward());
  }
}

}  // namespace ember::autograd
