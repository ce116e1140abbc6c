// Thread-local grad mode: whether ops record the autograd graph.
#pragma once

namespace ember::autograd {

bool grad_enabled();
void set_grad_enabled(bool enabled);
// inference_mode: like no_grad, and also the mode ember.inference_mode() reports.
bool inference_mode_enabled();

// RAII switch, restoring the previous mode on scope exit.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : prev_(grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeGuard() { set_grad_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

struct NoGradGuard : GradModeGuard {
  NoGradGuard() : GradModeGuard(false) {}
};

class InferenceModeGuard {
 public:
  explicit InferenceModeGuard(bool enabled = true);
  ~InferenceModeGuard();

 private:
  bool prev_grad_, prev_inference_;
};

}  // namespace ember::autograd

namespace ember {
using autograd::NoGradGuard;
}
