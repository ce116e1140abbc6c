// Reductions: sum, mean, ...
#include "bind.h"

namespace ember::python {

void init_reduce(py::module_& m) {
  auto& cls = tensor_class();
  auto bind_dims_reduction = [&](const char* name, auto fn) {
    auto f = [fn, name](const Tensor& x, py::object dim, bool keepdim, py::object dtype) {
      return fn(x, to_dims(dim, name), keepdim, to_optional_dtype(dtype));
    };
    m.def(name, f, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
          py::arg("dtype") = py::none());
    cls.def(name, f, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
            py::arg("dtype") = py::none());
  };
  bind_dims_reduction("sum", [](const Tensor& x, const Dims& d, bool k, std::optional<DType> dt) { return sum(x, d, k, dt); });
  bind_dims_reduction("mean", [](const Tensor& x, const Dims& d, bool k, std::optional<DType> dt) { return mean(x, d, k, dt); });
}

}  // namespace ember::python
