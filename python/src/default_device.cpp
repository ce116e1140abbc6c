// Per-thread default device of the factory functions; the Python side
// (python/ember/_default_device.py) keeps the stack of `with device:` blocks.
#include "default_device.h"

namespace ember::python {

namespace {
// Unset (the CPU) on every thread until set there, so an unset default costs
// one thread-local read per factory call.
thread_local std::optional<Device> g_default_device;
}  // namespace

Device factory_device(py::handle device) {
  if (device.is_none()) return g_default_device.value_or(kCPU);
  return to_device(device);
}

std::optional<Device> default_device() { return g_default_device; }

void set_default_device(std::optional<Device> device) { g_default_device = device; }

}  // namespace ember::python
