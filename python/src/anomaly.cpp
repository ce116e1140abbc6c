// Anomaly detection from Python: the switch, and the hooks that give the C++
// engine Python's traceback of a forward call and Python's warnings.
#include <ember/autograd/anomaly_mode.h>

#include "bind.h"

namespace ember::python {

namespace {

std::string python_stack() {
  if (!Py_IsInitialized()) return {};
  py::gil_scoped_acquire gil;
  try {
    py::list frames = py::module_::import("traceback").attr("format_stack")();
    std::string out;
    for (const auto& f : frames) out += f.cast<std::string>();
    return out;
  } catch (py::error_already_set&) {
    return {};  // e.g. during interpreter shutdown
  }
}

void python_warn(const std::string& message) {
  if (!Py_IsInitialized()) return;
  py::gil_scoped_acquire gil;
  // A warnings filter of "error" cannot raise from inside the engine: the
  // anomaly's own exception follows anyway.
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) PyErr_Clear();
}

}  // namespace

void init_anomaly(py::module_& m) {
  autograd::set_anomaly_hooks({python_stack, python_warn});
  m.def("_set_anomaly_enabled", &autograd::set_anomaly_enabled, py::arg("enabled"), py::arg("check_nan") = true);
  m.def("is_anomaly_enabled", &autograd::anomaly_enabled, "Whether autograd's anomaly detection is on.");
  m.def("is_anomaly_check_nan_enabled", &autograd::anomaly_check_nan,
        "Whether anomaly detection (when on) also fails a backward that produces NaN.");
  m.def("_anomaly_forward_stack", [](const std::shared_ptr<autograd::Node>& node) {
    return autograd::anomaly_forward_stack(node.get());
  });
}

}  // namespace ember::python
