// ember.as_strided / Tensor.as_strided (core/ops/windows.h).
#include <ember/core/ops/windows.h>

#include "bind.h"

namespace ember::python {

namespace {

Tensor as_strided_py(const Tensor& t, py::handle size, py::handle stride, std::optional<int64_t> storage_offset) {
  const std::vector<int64_t> sizes = to_int_list(size, "as_strided");
  const std::vector<int64_t> strides = to_int_list(stride, "as_strided");
  return as_strided(t, Shape(sizes.begin(), sizes.end()), Strides(strides.begin(), strides.end()), storage_offset);
}

}  // namespace

void init_strided(py::module_& m) {
  tensor_class().def("as_strided", &as_strided_py, py::arg("size"), py::arg("stride"),
                     py::arg("storage_offset") = py::none());
  m.def("as_strided", &as_strided_py, py::arg("input"), py::arg("size"), py::arg("stride"),
        py::arg("storage_offset") = py::none());
}

}  // namespace ember::python
