#include <ember/distributed/reducer.h>

#include <algorithm>
#include <map>
#include <unordered_set>
#include <utility>

#include <ember/autograd/engine.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/factory.h>

namespace ember::distributed {

std::vector<std::vector<size_t>> compute_bucket_assignment(const std::vector<Tensor>& params,
                                                           const std::vector<size_t>& order,
                                                           int64_t first_cap_bytes, int64_t cap_bytes) {
  struct Open {
    std::vector<size_t> params;
    int64_t bytes = 0;
    bool first = true;  // still the first bucket of its dtype and device
  };
  std::map<std::pair<int, std::string>, Open> open;
  std::vector<std::vector<size_t>> closed;
  for (size_t i : order) {
    const Tensor& p = params.at(i);
    Open& b = open[{static_cast<int>(p.dtype()), p.device().str()}];
    b.params.push_back(i);
    b.bytes += p.numel() * static_cast<int64_t>(p.element_size());
    if (b.bytes >= (b.first ? first_cap_bytes : cap_bytes)) {
      closed.push_back(std::move(b.params));
      b.params.clear();
      b.bytes = 0;
      b.first = false;
    }
  }
  for (auto& [key, b] : open) {
    if (!b.params.empty()) closed.push_back(std::move(b.params));
  }
  // Launch order follows the order the parameters were given in.
  std::vector<size_t> rank(params.size());
  for (size_t k = 0; k < order.size(); ++k) rank[order[k]] = k;
  std::sort(closed.begin(), closed.end(), [&](const auto& a, const auto& b) { return rank[a[0]] < rank[b[0]]; });
  return closed;
}

Reducer::Reducer(std::vector<Tensor> params, std::shared_ptr<ProcessGroup> group, ReducerOptions options,
                 std::vector<std::string> names)
    : params_(std::move(params)), names_(std::move(names)), group_(std::move(group)), options_(options) {
  EMBER_CHECK(group_ != nullptr, ValueError, "Reducer: the process group is null");
  EMBER_CHECK(!params_.empty(), ValueError, "DistributedDataParallel: the module has no parameter that requires "
              "gradients; there is nothing to synchronize");
  EMBER_CHECK(names_.empty() || names_.size() == params_.size(), ValueError, "Reducer: got ", names_.size(),
              " names for ", params_.size(), " parameters");
  EMBER_CHECK(options_.bucket_cap_bytes > 0 && options_.first_bucket_cap_bytes > 0, ValueError,
              "Reducer: bucket caps must be positive (got ", options_.first_bucket_cap_bytes, " and ",
              options_.bucket_cap_bytes, " bytes)");
  std::unordered_set<const TensorImpl*> seen;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    EMBER_CHECK(p.defined() && p.requires_grad() && p.is_leaf(), ValueError, "Reducer: parameter ",
                describe({i}), " must be a leaf tensor that requires grad");
    EMBER_CHECK(seen.insert(p.impl()).second, ValueError, "Reducer: parameter ", describe({i}),
                " appears twice in the parameter list");
  }

  // Reverse registration order approximates the order gradients arrive in.
  std::vector<size_t> order(params_.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = order.size() - 1 - k;
  slots_.resize(params_.size());
  for (auto& indices : compute_bucket_assignment(params_, order, options_.first_bucket_cap_bytes,
                                                 options_.bucket_cap_bytes)) {
    Bucket b;
    int64_t numel = 0;
    for (size_t pos = 0; pos < indices.size(); ++pos) {
      slots_[indices[pos]] = {buckets_.size(), pos};
      b.offsets.push_back(numel);
      numel += params_[indices[pos]].numel();
    }
    const Tensor& first = params_[indices[0]];
    b.buffer = zeros({numel}, first.dtype(), first.device());
    b.params = std::move(indices);
    buckets_.push_back(std::move(b));
  }
  if (options_.gradient_as_bucket_view) {
    for (size_t i = 0; i < params_.size(); ++i) views_.push_back(bucket_view(i));
  }
  ready_.assign(params_.size(), false);
  used_.assign(params_.size(), false);

  for (size_t i = 0; i < params_.size(); ++i) {
    hook_ids_.push_back(
        autograd::register_post_accumulate_grad_hook(params_[i], [this, i](const Tensor&) { on_gradient(i); }));
  }
}

Reducer::~Reducer() {
  for (size_t i = 0; i < hook_ids_.size(); ++i) autograd::remove_post_accumulate_grad_hook(params_[i], hook_ids_[i]);
}

std::string Reducer::describe(const std::vector<size_t>& indices) const {
  std::string out;
  for (size_t k = 0; k < indices.size(); ++k) {
    if (k) out += ", ";
    out += names_.empty() ? str("#", indices[k]) : str(names_[indices[k]], " (#", indices[k], ")");
  }
  return out;
}

Tensor Reducer::bucket_view(size_t index) const {
  const Slot& s = slots_[index];
  const Bucket& b = buckets_[s.bucket];
  const Tensor& p = params_[index];
  return b.buffer.narrow(0, b.offsets[s.position], p.numel()).view(p.shape());
}

std::vector<std::vector<size_t>> Reducer::bucket_indices() const {
  std::vector<std::vector<size_t>> out;
  for (const auto& b : buckets_) out.push_back(b.params);
  return out;
}

std::vector<size_t> Reducer::unused_parameters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return unused_;
}

void Reducer::prepare_for_backward(const std::vector<Tensor>& outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  expect_hooks_ = true;
  callback_queued_ = false;
  next_bucket_ = 0;
  ready_.assign(params_.size(), false);
  used_.assign(params_.size(), false);
  for (auto& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
  }
  unused_.clear();
  if (options_.find_unused_parameters) find_unused(outputs);
}

// Walks the outputs' graph to the AccumulateGrad nodes it reaches: every
// parameter without one gets no gradient from this backward.
void Reducer::find_unused(const std::vector<Tensor>& outputs) {
  std::unordered_set<const TensorImpl*> reached;
  std::unordered_set<autograd::Node*> seen;
  std::vector<std::shared_ptr<autograd::Node>> stack;
  for (const auto& out : outputs) {
    if (!out.defined() || !out.requires_grad()) continue;
    autograd::Edge e = autograd::gradient_edge(out);
    if (e.valid() && seen.insert(e.node.get()).second) stack.push_back(e.node);
  }
  while (!stack.empty()) {
    auto node = std::move(stack.back());
    stack.pop_back();
    if (auto* acc = dynamic_cast<autograd::AccumulateGrad*>(node.get())) reached.insert(acc->leaf().get());
    for (const auto& e : node->next_edges) {
      if (e.valid() && seen.insert(e.node.get()).second) stack.push_back(e.node);
    }
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!reached.count(params_[i].impl())) unused_.push_back(i);
  }
}

void Reducer::on_gradient(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!expect_hooks_) return;  // no_sync, or a backward outside DDP's forward: accumulate locally
  if (!callback_queued_) {
    callback_queued_ = true;
    autograd::queue_callback([this] { finalize(); });
    // Unused parameters count as ready once backward is under way.
    for (size_t u : unused_) mark_ready(u);
  }
  EMBER_CHECK(!ready_[index], Error, "DistributedDataParallel: parameter ", describe({index}),
              " got a gradient twice in one iteration",
              options_.find_unused_parameters ? " (it was found unused after forward: return every output the "
                                                "loss depends on from forward)"
                                              : " (call backward once per forward)");
  used_[index] = true;
  mark_ready(index);
}

void Reducer::copy_into_bucket(size_t index) {
  autograd::NoGradGuard no_grad;
  const Tensor grad = params_[index].grad();
  if (options_.gradient_as_bucket_view) {
    Tensor view = views_[index];
    if (grad.defined() && grad.is_same(view)) return;  // backward accumulated into the bucket itself
    if (!grad.defined()) {
      view.zero_();  // an unused parameter: .grad is set only if some rank used it (write_back)
      return;
    }
    view.copy_(grad);
    params_[index].set_grad(view);
    return;
  }
  Tensor view = bucket_view(index);
  if (grad.defined()) view.copy_(grad); else view.zero_();
}

void Reducer::mark_ready(size_t index) {
  copy_into_bucket(index);
  ready_[index] = true;
  Bucket& b = buckets_[slots_[index].bucket];
  if (--b.pending == 0) launch_ready_buckets();
}

// Every rank issues the same collectives in the same order: bucket k is
// launched only after buckets 0..k-1, even if it filled up first.
void Reducer::launch_ready_buckets() {
  while (next_bucket_ < buckets_.size() && buckets_[next_bucket_].pending == 0) {
    Bucket& b = buckets_[next_bucket_++];
    b.work = group_->all_reduce(b.buffer, ReduceOp::Sum);
  }
}

void Reducer::finalize() {
  std::lock_guard<std::mutex> lock(mutex_);
  expect_hooks_ = false;
  callback_queued_ = false;
  std::vector<size_t> missing;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!ready_[i]) missing.push_back(i);
  }
  if (!missing.empty()) {
    abandon_iteration();
    throw Error(str("DistributedDataParallel: parameters ", describe(missing), " received no gradient in this "
                    "backward pass on rank ", group_->rank(), ", so their gradients cannot be reduced across "
                    "ranks. If the forward does not use every parameter, pass find_unused_parameters=True to "
                    "DistributedDataParallel; otherwise make sure every forward output the loss depends on is "
                    "returned and that backward runs once per forward. The ranks may now be out of step: "
                    "restart the job after fixing this."));
  }
  // Which parameters got a gradient on any rank: a parameter unused
  // everywhere keeps its .grad as it was (None stays None), as in PyTorch.
  std::vector<float> global_use;
  std::shared_ptr<Work> use_work;
  Tensor use;
  if (options_.find_unused_parameters) {
    Tensor host = zeros({static_cast<int64_t>(params_.size())}, DType::Float32);
    float* u = host.data<float>();
    for (size_t i = 0; i < params_.size(); ++i) u[i] = used_[i] ? 1.0f : 0.0f;
    use = host.to(params_.front().device());  // NCCL reduces GPU tensors only
    use_work = group_->all_reduce(use, ReduceOp::Sum);
  }
  for (auto& b : buckets_) b.work->wait();
  if (use_work) {
    use_work->wait();
    use = use.to(kCPU);
    const float* u = use.data<float>();
    global_use.assign(u, u + params_.size());
  }
  write_back(global_use);
}

void Reducer::write_back(const std::vector<float>& global_use) {
  autograd::NoGradGuard no_grad;
  for (auto& b : buckets_) {
    b.buffer.div_(scalar_tensor(group_->size(), b.buffer.dtype(), b.buffer.device()));
    b.work.reset();
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor grad = params_[i].grad();
    if (!global_use.empty() && global_use[i] == 0.0f) continue;
    if (options_.gradient_as_bucket_view) {
      if (!grad.defined() || !grad.is_same(views_[i])) params_[i].set_grad(views_[i]);
      continue;
    }
    const Tensor reduced = bucket_view(i);
    if (grad.defined() && !grad.requires_grad()) {
      Tensor(grad).copy_(reduced);
    } else {
      params_[i].set_grad(reduced.clone());
    }
  }
}

// After a failed iteration collectives may still be running into the
// buckets: later iterations get fresh buffers instead of waiting on them.
void Reducer::abandon_iteration() {
  for (auto& b : buckets_) {
    if (!b.work) continue;
    b.work.reset();
    b.buffer = zeros({b.buffer.numel()}, b.buffer.dtype(), b.buffer.device());
    for (size_t i : b.params) {
      if (options_.gradient_as_bucket_view) views_[i] = bucket_view(i);
    }
  }
}

}  // namespace ember::distributed
