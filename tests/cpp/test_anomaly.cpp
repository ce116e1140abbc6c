// Anomaly mode in the engine: NaN gradients name the node and its output,
// the forward stack recorded at record() time is attached, and nothing is
// checked while the mode is off.
#include <ember/autograd/anomaly_mode.h>

#include <cmath>

#include "util.h"

using namespace ember;
using test::require_throws;
using test::values;

namespace {
// Restores anomaly mode and the hooks whatever a test does.
struct AnomalyScope {
  explicit AnomalyScope(bool check_nan = true) { autograd::set_anomaly_enabled(true, check_nan); }
  ~AnomalyScope() {
    autograd::set_anomaly_enabled(false, true);
    autograd::set_anomaly_hooks({});
  }
};

Tensor leaf(const std::vector<double>& v) {
  Tensor t = values(v, {static_cast<int64_t>(v.size())}, DType::Float64);
  t.requires_grad_(true);
  return t;
}
}  // namespace

TEST_CASE("anomaly mode: a NaN gradient names the node and the output index", "[anomaly]") {
  std::vector<std::string> warnings;
  AnomalyScope scope;
  autograd::set_anomaly_hooks({[] { return std::string("  forward stack of the op\n"); },
                               [&](const std::string& w) { warnings.push_back(w); }});
  Tensor x = leaf({0.0});
  Tensor y = x.div(x).sum();  // d/d(denominator) = -x/x^2 = nan at 0
  require_throws<Error>([&] { y.backward(); },
                        "Function 'DivBackward0' returned nan values in its 1th output.\n\n"
                        "Traceback of forward call that caused the error:\n  forward stack of the op\n");
  REQUIRE(warnings.size() == 1);
  REQUIRE(warnings[0].find("Error detected in DivBackward0") == 0);
  REQUIRE(autograd::anomaly_forward_stack(y.grad_fn().get()) == "  forward stack of the op\n");
}

TEST_CASE("anomaly mode off or without check_nan: NaN gradients pass", "[anomaly]") {
  Tensor x = leaf({0.0});
  x.sqrt().mul(values({0.0}, {1}, DType::Float64)).sum().backward();
  REQUIRE(std::isnan(x.grad().item().to_double()));
  AnomalyScope scope(/*check_nan=*/false);
  Tensor z = leaf({0.0});
  z.sqrt().mul(values({0.0}, {1}, DType::Float64)).sum().backward();
  REQUIRE(std::isnan(z.grad().item().to_double()));
}

TEST_CASE("anomaly mode: nodes recorded with the mode off have no stack", "[anomaly]") {
  Tensor x = leaf({0.0});
  Tensor y = x.sqrt().mul(values({0.0}, {1}, DType::Float64)).sum();
  AnomalyScope scope;
  autograd::set_anomaly_hooks({[] { return std::string("unused"); }, [](const std::string&) {}});
  require_throws<Error>([&] { y.backward(); }, "Function 'SqrtBackward0' returned nan values in its 0th output.");
  REQUIRE(autograd::anomaly_forward_stack(y.grad_fn().get()).empty());
}
