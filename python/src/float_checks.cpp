// isnan, isinf, isposinf, isneginf, isfinite, isclose, allclose: functions and
// Tensor methods with PyTorch's names and keywords.
#include "bind.h"

namespace ember::python {

void init_float_checks(py::module_& m) {
  auto& cls = tensor_class();
  using Check = Tensor (*)(const Tensor&);
  const std::pair<const char*, Check> checks[] = {
      {"isnan", &isnan}, {"isinf", &isinf}, {"isposinf", &isposinf}, {"isneginf", &isneginf}, {"isfinite", &isfinite}};
  for (const auto& [name, fn] : checks) {
    m.def(name, fn, py::arg("input"));
    cls.def(name, fn);
  }
  m.def("isclose", &isclose, py::arg("input"), py::arg("other"), py::arg("rtol") = 1e-05, py::arg("atol") = 1e-08,
        py::arg("equal_nan") = false);
  cls.def("isclose", &isclose, py::arg("other"), py::arg("rtol") = 1e-05, py::arg("atol") = 1e-08,
          py::arg("equal_nan") = false);
  m.def("allclose", &allclose, py::arg("input"), py::arg("other"), py::arg("rtol") = 1e-05, py::arg("atol") = 1e-08,
        py::arg("equal_nan") = false);
  cls.def("allclose", &allclose, py::arg("other"), py::arg("rtol") = 1e-05, py::arg("atol") = 1e-08,
          py::arg("equal_nan") = false);
}

}  // namespace ember::python
