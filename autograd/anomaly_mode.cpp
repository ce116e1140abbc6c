#include <ember/autograd/anomaly_mode.h>

#include <iostream>
#include <mutex>
#include <unordered_map>

#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/float_checks.h>
#include <ember/core/ops/reduce.h>

namespace ember::autograd {

namespace anomaly_detail {
std::atomic<bool> g_enabled{false};
}

namespace {

std::atomic<bool> g_check_nan{true};

// Node -> forward stack. A side table rather than a Node member: entries hold
// a weak_ptr so a later node at a reused address is not mistaken for the
// dead one, and dead entries are swept as the table grows.
struct Entry {
  std::weak_ptr<Node> node;
  std::string stack;
};

struct Registry {
  std::mutex mutex;
  std::unordered_map<const Node*, Entry> entries;
  size_t sweep_at = 1024;
  AnomalyHooks hooks;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: nodes may outlive static teardown
  return *r;
}

void sweep(Registry& r) {
  for (auto it = r.entries.begin(); it != r.entries.end();) {
    it = it->second.node.expired() ? r.entries.erase(it) : std::next(it);
  }
  r.sweep_at = std::max<size_t>(1024, 2 * r.entries.size());
}

const char* kTracebackHeader = "Traceback of forward call that caused the error:\n";

void warn(const std::string& message) {
  std::function<void(const std::string&)> hook;
  {
    std::lock_guard<std::mutex> lock(registry().mutex);
    hook = registry().hooks.warn;
  }
  if (hook) {
    hook(message);
  } else {
    std::cerr << "Warning: " << message << std::endl;
  }
}

std::string error_report(const Node& node) {
  std::string stack = anomaly_forward_stack(&node);
  std::string report = "Error detected in " + node.name() + ". ";
  if (stack.empty()) return report + "No forward pass information available. Enable detect anomaly during forward "
                                     "pass for more information.";
  return report + kTracebackHeader + stack;
}

}  // namespace

bool anomaly_check_nan() { return g_check_nan.load(std::memory_order_relaxed); }

void set_anomaly_enabled(bool enabled, bool check_nan) {
  g_check_nan.store(check_nan, std::memory_order_relaxed);
  anomaly_detail::g_enabled.store(enabled, std::memory_order_relaxed);
}

void set_anomaly_hooks(AnomalyHooks hooks) {
  std::lock_guard<std::mutex> lock(registry().mutex);
  registry().hooks = std::move(hooks);
}

void anomaly_remember(const std::shared_ptr<Node>& node) {
  Registry& r = registry();
  std::function<std::string()> capture;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    capture = r.hooks.capture_stack;
  }
  // Captured outside the lock: the hook may take Python's GIL.
  std::string stack = capture ? capture() : std::string();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.entries.size() >= r.sweep_at) sweep(r);
  r.entries[node.get()] = Entry{node, std::move(stack)};
}

std::string anomaly_forward_stack(const Node* node) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.entries.find(node);
  if (it == r.entries.end()) return {};
  auto alive = it->second.node.lock();
  return alive.get() == node ? it->second.stack : std::string();
}

std::vector<Tensor> anomaly_checked_apply(Node& node, const std::vector<Tensor>& grads) {
  std::vector<Tensor> result;
  try {
    result = node.apply(grads);
  } catch (...) {
    warn(error_report(node));
    throw;
  }
  if (!anomaly_check_nan()) return result;
  for (size_t i = 0; i < result.size(); ++i) {
    const Tensor& g = result[i];
    if (!g.defined() || !is_floating(g.dtype())) continue;
    if (!any(isnan(g)).item().to_bool()) continue;
    warn(error_report(node));
    std::string stack = anomaly_forward_stack(&node);
    EMBER_CHECK(false, Error, "Function '", node.name(), "' returned nan values in its ", i, "th output.",
                stack.empty() ? std::string() : std::string("\n\n") + kTracebackHeader + stack);
  }
  return result;
}

}  // namespace ember::autograd
