// Anomaly detection (ember.autograd.detect_anomaly): while it is on, every
// recorded node remembers the stack of the forward call that created it, and
// backward reports that stack when the node's backward fails (and, with
// check_nan, fails a node whose gradient contains NaN). While it is off the
// cost is the one flag check in record() and in the engine.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::autograd {

struct Node;

namespace anomaly_detail {
extern std::atomic<bool> g_enabled;
}

// Process-wide, as in PyTorch.
inline bool anomaly_enabled() { return anomaly_detail::g_enabled.load(std::memory_order_relaxed); }
bool anomaly_check_nan();
void set_anomaly_enabled(bool enabled, bool check_nan = true);

// What the front-end provides: the current call stack as text (the Python
// bindings return Python's traceback), and a way to warn (the bindings issue
// a UserWarning). Without them the stack is empty and warnings go to stderr.
struct AnomalyHooks {
  std::function<std::string()> capture_stack;
  std::function<void(const std::string&)> warn;
};
void set_anomaly_hooks(AnomalyHooks hooks);

// Called by record() when anomaly mode is on: stores the forward stack for node.
void anomaly_remember(const std::shared_ptr<Node>& node);
// The forward stack remembered for node ("" when none was).
std::string anomaly_forward_stack(const Node* node);

// node->apply(grads), reporting the node's forward stack when it throws, and
// with check_nan throwing "Function '<name>' returned nan values in its <i>th
// output." when a produced gradient holds NaN. Used by the engine in anomaly mode.
std::vector<Tensor> anomaly_checked_apply(Node& node, const std::vector<Tensor>& grads);

}  // namespace ember::autograd
