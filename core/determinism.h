// ember.use_deterministic_algorithms: a process-wide switch that the GPU
// paths read. With it on, ops that have a deterministic variant use it (index
// accumulation sorts its targets instead of adding with atomics, cuDNN picks
// deterministic algorithms, attention backward takes the math path); the ops
// that have none call alert_not_deterministic, which raises, or warns when
// warn_only was asked for. The CPU kernels are deterministic either way.
#pragma once
#include <string>

namespace ember {

void set_deterministic_algorithms(bool enabled, bool warn_only = false);
bool deterministic_algorithms();
bool deterministic_algorithms_warn_only();

// For an op with no deterministic implementation, called only when the
// switch is on: throws ember::Error naming `op`, or warns when warn_only.
void alert_not_deterministic(const std::string& op);

// Warnings from C++: the Python bindings install a handler that raises a
// Python UserWarning; without one they go to stderr.
using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);
void warn(const std::string& message);

}  // namespace ember
