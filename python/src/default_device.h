// The device factory functions (zeros, rand, tensor, ...) use when called
// without device=: ember.set_default_device / `with ember.device(...)`.
#pragma once

#include <optional>

#include "bind.h"

namespace ember::python {

// The device named by `device`, or the default device when it is None
// (the CPU unless one was set on this thread).
Device factory_device(py::handle device);

// The default device set on this thread, if any (per thread, as torch).
std::optional<Device> default_device();
void set_default_device(std::optional<Device> device);

}  // namespace ember::python
