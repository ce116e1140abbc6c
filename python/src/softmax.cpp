// Bindings of the softmax family: ember.softmax / log_softmax and the Tensor methods.
#include "bind.h"

namespace ember::python {

void init_softmax(py::module_& m) {
  auto& cls = tensor_class();
  auto bind = [&](const char* name, Tensor (*fn)(const Tensor&, int64_t, std::optional<DType>)) {
    auto f = [fn](const Tensor& x, int64_t dim, py::object dtype) { return fn(x, dim, to_optional_dtype(dtype)); };
    m.def(name, f, py::arg("input"), py::arg("dim"), py::arg("dtype") = py::none());
    cls.def(name, f, py::arg("dim"), py::arg("dtype") = py::none());
  };
  bind("softmax", [](const Tensor& x, int64_t d, std::optional<DType> dt) { return softmax(x, d, dt); });
  bind("log_softmax", [](const Tensor& x, int64_t d, std::optional<DType> dt) { return log_softmax(x, d, dt); });
}

}  // namespace ember::python
