// ember.use_deterministic_algorithms and friends (core/determinism.h), and
// the handler that turns C++ warnings into Python UserWarnings.
#include <ember/core/determinism.h>

#include "bind.h"

namespace ember::python {

namespace {

// Backward runs without the GIL: take it. A warning filter set to "error"
// makes PyErr_WarnEx fail; that surfaces as the Python exception.
void python_warning(const std::string& message) {
  py::gil_scoped_acquire acquire;
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
}

}  // namespace

void init_determinism(py::module_& m) {
  set_warning_handler(&python_warning);
  m.def("_set_deterministic_algorithms", &set_deterministic_algorithms, py::arg("mode"), py::arg("warn_only") = false);
  m.def("_deterministic_algorithms", &deterministic_algorithms);
  m.def("_deterministic_algorithms_warn_only", &deterministic_algorithms_warn_only);
  m.def("_alert_not_deterministic", &alert_not_deterministic, py::arg("op"),
        "Raises (or, with warn_only, warns) that op has no deterministic implementation; call it only while the "
        "switch is on.");
}

}  // namespace ember::python
