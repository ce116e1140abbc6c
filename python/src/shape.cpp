// Shape ops and views.
#include "bind.h"

namespace ember::python {

void init_shape(py::module_& m) {
  auto& cls = tensor_class();
  cls.def("view", [](const Tensor& t, py::args args) {
        if (args.size() == 1 && py::isinstance<PyDType>(args[0])) {
          throw NotImplementedError("view(dtype) is not supported yet");
        }
        return t.view(shape_from_args(args, "view"));
      })
      .def("reshape", [](const Tensor& t, py::args args) { return t.reshape(shape_from_args(args, "reshape")); })
      .def("expand", [](const Tensor& t, py::args args) { return t.expand(shape_from_args(args, "expand")); })
      .def("permute", [](const Tensor& t, py::args args) { return t.permute(shape_from_args(args, "permute")); })
      .def("view_as", &Tensor::view_as)
      .def("reshape_as", &Tensor::reshape_as)
      .def("expand_as", &Tensor::expand_as)
      .def("transpose", &Tensor::transpose)
      .def("t", &Tensor::t)
      .def_property_readonly("T", [](const Tensor& t) {
        Dims d(t.dim());
        for (int64_t i = 0; i < t.dim(); ++i) d[i] = t.dim() - 1 - i;
        return t.permute(d);
      })
      .def_property_readonly("mT", [](const Tensor& t) { return t.transpose(-2, -1); })
      .def("unsqueeze", &Tensor::unsqueeze)
      .def("squeeze", [](const Tensor& t, std::optional<int64_t> dim) { return dim ? t.squeeze(*dim) : t.squeeze(); },
           py::arg("dim") = py::none())
      .def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  m.def("reshape", [](const Tensor& t, py::object shape) { return t.reshape(to_int_list(shape, "reshape")); });
  m.def("permute", [](const Tensor& t, py::object dims) { return t.permute(to_int_list(dims, "permute")); });
  m.def("transpose", &ember::transpose);
  m.def("t", [](const Tensor& t) { return t.t(); });
  m.def("unsqueeze", &ember::unsqueeze);
  m.def("squeeze", [](const Tensor& t, std::optional<int64_t> dim) { return squeeze(t, dim); },
        py::arg("input"), py::arg("dim") = py::none());
  m.def("flatten", [](const Tensor& t, int64_t s, int64_t e) { return t.flatten(s, e); }, py::arg("input"),
        py::arg("start_dim") = 0, py::arg("end_dim") = -1);
}

}  // namespace ember::python
