#include <ember/autograd/engine.h>

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include <ember/autograd/anomaly_mode.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/meta.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>

namespace ember::autograd {

namespace {

// Where autograd.grad() collects the gradient of one input.
struct Capture {
  Node* node;
  uint32_t input_nr;
};

// The callback lists of the backward passes running on this thread, innermost
// last (a hook may itself run a backward).
thread_local std::vector<std::vector<std::function<void()>>*> t_callbacks;

struct CallbackScope {
  explicit CallbackScope(std::vector<std::function<void()>>* list) { t_callbacks.push_back(list); }
  ~CallbackScope() { t_callbacks.pop_back(); }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;
};

struct Seed {
  Edge edge;
  Tensor grad;
};

std::vector<Seed> make_seeds(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots,
                             const char* op) {
  EMBER_CHECK(grad_roots.empty() || grad_roots.size() == roots.size(), ValueError, op,
              ": got ", roots.size(), " outputs but ", grad_roots.size(), " gradients");
  std::vector<Seed> seeds;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    EMBER_CHECK(r.defined(), ValueError, op, ": output ", i, " is undefined");
    EMBER_CHECK(r.requires_grad(), Error, op, ": element ", i,
                " of tensors does not require grad and does not have a grad_fn");
    Tensor g = i < grad_roots.size() ? grad_roots[i] : Tensor();
    if (!g.defined()) {
      EMBER_CHECK(r.numel() == 1, Error, op, ": grad can be implicitly created only for scalar outputs "
                  "(got shape ", shape_str(r.shape()), "); pass a gradient tensor of the same shape");
      g = ones_like(r);
    } else {
      EMBER_CHECK(g.shape() == r.shape(), Error, op, ": gradient has shape ", shape_str(g.shape()),
                  " but the output has shape ", shape_str(r.shape()));
    }
    seeds.push_back({gradient_edge(r), g});
  }
  return seeds;
}

// Runs one tensor hook; a replacement must look like the gradient it replaces.
Tensor call_hook(const Tensor::Hook& hook, const Tensor& g) {
  Tensor r = hook(g);
  if (!r.defined()) return g;
  EMBER_CHECK(r.shape() == g.shape(), Error, "hook: a tensor hook changed the size of the gradient from ",
              shape_str(g.shape()), " to ", shape_str(r.shape()));
  EMBER_CHECK(r.dtype() == g.dtype(), Error, "hook: a tensor hook changed the type of the gradient from ",
              dtype_name(g.dtype()), " to ", dtype_name(r.dtype()));
  EMBER_CHECK(r.device() == g.device(), Error, "hook: a tensor hook changed the device of the gradient from ",
              g.device().str(), " to ", r.device().str());
  return r;
}

Tensor run_hooks(Node* node, uint32_t nr, Tensor g) {
  // A leaf's hooks live on its meta; they run here, before autograd.grad()
  // captures the gradient, as well as before accumulation into .grad.
  if (auto* acc = dynamic_cast<AccumulateGrad*>(node)) {
    if (auto* lm = meta_if(Tensor(acc->leaf()))) {
      for (auto& [id, hook] : lm->hooks) g = call_hook(hook, g);
    }
  }
  auto it = node->tensor_hooks.find(nr);
  if (it != node->tensor_hooks.end()) {
    for (auto& [id, hook] : it->second) g = call_hook(hook, g);
  }
  auto rt = node->retained.find(nr);
  if (rt != node->retained.end()) {
    if (auto impl = rt->second.lock()) {
      auto& m = meta(Tensor(impl));
      Tensor gg = grad_enabled() ? g : g.detach();
      m.grad = m.grad.defined() ? add(m.grad, gg) : gg.clone();
    }
  }
  return g;
}

// Brings a gradient to its input's shape and dtype: formulas may return the
// broadcast shape (summed back here) or the compute dtype (cast back here).
Tensor validate(Node* node, size_t index, Tensor g, const OutputInfo& want) {
  if (g.shape() != want.shape) {
    bool reducible = g.dim() >= static_cast<int64_t>(want.shape.size());
    for (size_t d = 0; reducible && d < want.shape.size(); ++d) {
      const int64_t gs = g.shape()[g.dim() - want.shape.size() + d];
      reducible = want.shape[d] == gs || want.shape[d] == 1;
    }
    EMBER_CHECK(reducible, Error, "backward: function ", node->name(), " returned an invalid gradient at index ",
                index, " - got ", shape_str(g.shape()), " but expected shape compatible with ",
                shape_str(want.shape));
    g = sum_to(g, want.shape);
  }
  if (g.dtype() != want.dtype) g = g.to(want.dtype);
  return g;
}

void execute(const std::vector<Seed>& seeds, bool retain_graph, bool create_graph,
             const std::vector<Capture>* captures, std::vector<Tensor>* captured) {
  GradModeGuard mode(create_graph);
  std::vector<std::function<void()>> callbacks;
  CallbackScope callback_scope(&callbacks);

  // Count, for each reachable node, how many edges lead into it.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (const auto& s : seeds) {
    if (s.edge.valid() && seen.insert(s.edge.node.get()).second) stack.push_back(s.edge.node.get());
  }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const auto& e : n->next_edges) {
      if (!e.valid()) continue;
      ++deps[e.node.get()];
      if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
  }

  // For autograd.grad(): only nodes on a path to a captured input need to run.
  std::unordered_set<Node*> needed;
  if (captures) {
    std::unordered_set<Node*> targets;
    for (const auto& c : *captures) targets.insert(c.node);
    // A node is needed when it leads to a captured node. Post-order
    // DFS with an explicit stack: graphs can be far deeper than the C stack.
    std::unordered_map<Node*, bool> reaches;
    std::vector<std::pair<Node*, size_t>> dfs;  // (node, next edge to visit)
    auto visit = [&](Node* n) {
      if (reaches.emplace(n, targets.count(n) > 0).second) dfs.emplace_back(n, 0);
    };
    for (const auto& s : seeds) {
      if (s.edge.valid()) visit(s.edge.node.get());
      while (!dfs.empty()) {
        auto& [n, next] = dfs.back();
        if (next < n->next_edges.size()) {
          const Edge& e = n->next_edges[next++];
          if (e.valid()) visit(e.node.get());
          continue;
        }
        // A captured node itself need not run: its gradient is taken before.
        bool leads = false;
        for (const auto& e : n->next_edges) leads = leads || (e.valid() && reaches[e.node.get()]);
        if (leads) {
          reaches[n] = true;
          needed.insert(n);
        }
        dfs.pop_back();
      }
    }
  }

  struct Later {
    bool operator()(const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) const {
      return a->sequence_nr < b->sequence_nr;
    }
  };
  std::priority_queue<std::shared_ptr<Node>, std::vector<std::shared_ptr<Node>>, Later> ready;
  std::unordered_map<Node*, std::vector<Tensor>> buffers;
  // Which buffered gradients the engine made itself (a sum), so that no one
  // else holds them: those take further gradients in place (a weight used at
  // every step of a loop: no new tensor per use), unless create_graph needs
  // the sums recorded.
  std::unordered_map<Node*, std::vector<bool>> owned;

  auto accumulate = [&](const Edge& e, const Tensor& g) {
    auto& buf = buffers[e.node.get()];
    auto& own = owned[e.node.get()];
    if (buf.size() < e.node->outputs.size()) {
      buf.resize(e.node->outputs.size());
      own.resize(e.node->outputs.size(), false);
    }
    Tensor& slot = buf[e.input_nr];
    if (!slot.defined()) {
      slot = g;
    } else if (own[e.input_nr] && !grad_enabled() && slot.dtype() == g.dtype() && slot.shape() == g.shape() &&
               slot.device() == g.device()) {
      slot.add_(g);
    } else {
      slot = add(slot, g);
      own[e.input_nr] = true;
    }
  };

  for (const auto& s : seeds) {
    if (!s.edge.valid()) continue;
    accumulate(s.edge, s.grad);
  }
  for (const auto& s : seeds) {
    Node* n = s.edge.node.get();
    if (n && deps[n] == 0) {
      deps[n] = -1;  // queued
      ready.push(s.edge.node);
    }
  }

  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.top();
    ready.pop();
    std::vector<Tensor> grads = std::move(buffers[node.get()]);
    buffers.erase(node.get());
    owned.erase(node.get());
    grads.resize(node->outputs.size());
    for (uint32_t i = 0; i < grads.size(); ++i) {
      if (grads[i].defined()) grads[i] = run_hooks(node.get(), i, grads[i]);
    }
    if (captures) {
      for (size_t c = 0; c < captures->size(); ++c) {
        const auto& cap = (*captures)[c];
        if (cap.node == node.get() && grads[cap.input_nr].defined()) (*captured)[c] = grads[cap.input_nr];
      }
    }
    const bool is_accumulator = dynamic_cast<AccumulateGrad*>(node.get()) != nullptr;
    const bool run = captures ? (!is_accumulator && needed.count(node.get()) > 0) : true;
    std::vector<Tensor> input_grads;
    if (run) {
      // Materialise zeros for outputs that got no gradient, so formulas need not care.
      for (uint32_t i = 0; i < grads.size() && node->materialize_grads; ++i) {
        const auto& info = node->outputs[i];
        if (!grads[i].defined() && is_differentiable(info.dtype)) grads[i] = zeros(info.shape, info.dtype, info.device);
      }
      input_grads = anomaly_enabled() ? anomaly_checked_apply(*node, grads) : node->apply(grads);
      if (!retain_graph) node->release();
    }
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& e = node->next_edges[i];
      if (!e.valid()) continue;
      if (i < input_grads.size() && input_grads[i].defined()) {
        accumulate(e, validate(node.get(), i, input_grads[i], e.node->outputs[e.input_nr]));
      }
      int& d = deps[e.node.get()];
      if (--d == 0) {
        d = -1;
        ready.push(e.node);
      }
    }
  }

  // By index: a callback may queue another, growing the list.
  for (size_t i = 0; i < callbacks.size(); ++i) {
    auto callback = std::move(callbacks[i]);
    callback();
  }
}

}  // namespace

void queue_callback(std::function<void()> callback) {
  EMBER_CHECK(!t_callbacks.empty(), Error,
              "queue_callback: a final callback can only be queued while a backward pass is running");
  t_callbacks.back()->push_back(std::move(callback));
}

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph,
              bool create_graph) {
  auto seeds = make_seeds(roots, grad_roots, "backward");
  execute(seeds, retain_graph || create_graph, create_graph, nullptr, nullptr);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph, bool create_graph,
                         bool allow_unused) {
  auto seeds = make_seeds(outputs, grad_outputs, "autograd.grad");
  std::vector<Capture> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    EMBER_CHECK(in.defined() && in.requires_grad(), Error, "autograd.grad: input ", i,
                " does not require grad");
    Edge e = gradient_edge(in);
    captures.push_back({e.node.get(), e.input_nr});
  }
  std::vector<Tensor> result(inputs.size());
  // Hold the accumulators alive while the graph runs.
  std::vector<Edge> keep;
  for (const auto& in : inputs) keep.push_back(gradient_edge(in));
  execute(seeds, retain_graph || create_graph, create_graph, &captures, &result);
  for (size_t i = 0; i < result.size(); ++i) {
    EMBER_CHECK(result[i].defined() || allow_unused, Error, "autograd.grad: one of the differentiated "
                "Tensors (input ", i, ") appears to not have been used in the graph. Set allow_unused=True "
                "if this is the desired behavior.");
  }
  return result;
}

}  // namespace ember::autograd
