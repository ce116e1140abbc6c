#include <ember/core/determinism.h>

#include <atomic>
#include <cstdio>

#include <ember/core/error.h>

namespace ember {

namespace {
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_warn_only{false};
std::atomic<WarningHandler> g_handler{nullptr};
}  // namespace

void set_deterministic_algorithms(bool enabled, bool warn_only) {
  g_warn_only = warn_only;  // kept with the switch off too, as torch reports it
  g_enabled = enabled;
}

bool deterministic_algorithms() { return g_enabled.load(std::memory_order_relaxed); }

bool deterministic_algorithms_warn_only() { return g_warn_only.load(std::memory_order_relaxed); }

void alert_not_deterministic(const std::string& op) {
  const std::string message =
      str(op, " does not have a deterministic implementation, but you set "
              "ember.use_deterministic_algorithms(True). Turn it off for this op, or pass warn_only=True to be "
              "warned instead of stopped");
  if (deterministic_algorithms_warn_only()) {
    warn(message);
    return;
  }
  throw Error(message);
}

void set_warning_handler(WarningHandler handler) { g_handler = handler; }

void warn(const std::string& message) {
  if (WarningHandler h = g_handler.load()) {
    h(message);
    return;
  }
  std::fprintf(stderr, "ember warning: %s\n", message.c_str());
}

}  // namespace ember
