// Binary ops and Python's arithmetic operators, with scalar operands.
#include "bind.h"

namespace ember::python {

namespace {
Tensor arg(py::handle o, const char* op) { return to_tensor_arg(o, op); }
}  // namespace

void init_binary(py::module_& m) {
  auto& cls = tensor_class();
  m.def("add", [](py::object a, py::object b, py::object alpha) {
    return add(arg(a, "add"), arg(b, "add"), to_scalar(alpha, "add"));
  }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def("sub", [](py::object a, py::object b, py::object alpha) {
    return sub(arg(a, "sub"), arg(b, "sub"), to_scalar(alpha, "sub"));
  }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def("mul", [](py::object a, py::object b) { return mul(arg(a, "mul"), arg(b, "mul")); });
  m.def("div", [](py::object a, py::object b, std::optional<std::string> rm) {
    return div(arg(a, "div"), arg(b, "div"), rm);
  }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  m.attr("subtract") = m.attr("sub");
  m.attr("multiply") = m.attr("mul");
  m.attr("divide") = m.attr("div");
  m.attr("true_divide") = m.attr("div");

  cls.def("add", [](const Tensor& a, py::object b, py::object alpha) {
        return add(a, arg(b, "add"), to_scalar(alpha, "add"));
      }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def("sub", [](const Tensor& a, py::object b, py::object alpha) {
        return sub(a, arg(b, "sub"), to_scalar(alpha, "sub"));
      }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def("mul", [](const Tensor& a, py::object b) { return mul(a, arg(b, "mul")); })
      .def("div", [](const Tensor& a, py::object b, std::optional<std::string> rm) {
        return div(a, arg(b, "div"), rm);
      }, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none())
      .def("add_", [](Tensor& a, py::object b, py::object alpha) -> Tensor& {
        return a.add_(arg(b, "add_"), to_scalar(alpha, "add_"));
      }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def("sub_", [](Tensor& a, py::object b, py::object alpha) -> Tensor& {
        return a.sub_(arg(b, "sub_"), to_scalar(alpha, "sub_"));
      }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def("mul_", [](Tensor& a, py::object b) -> Tensor& { return a.mul_(arg(b, "mul_")); })
      .def("div_", [](Tensor& a, py::object b, std::optional<std::string> rm) -> Tensor& {
        return a.div_(arg(b, "div_"), rm);
      }, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none())
      .def("__add__", [](const Tensor& a, py::object b) { return add(a, arg(b, "add")); }, py::is_operator())
      .def("__radd__", [](const Tensor& a, py::object b) { return add(arg(b, "add"), a); }, py::is_operator())
      .def("__sub__", [](const Tensor& a, py::object b) { return sub(a, arg(b, "sub")); }, py::is_operator())
      .def("__rsub__", [](const Tensor& a, py::object b) { return sub(arg(b, "sub"), a); }, py::is_operator())
      .def("__mul__", [](const Tensor& a, py::object b) { return mul(a, arg(b, "mul")); }, py::is_operator())
      .def("__rmul__", [](const Tensor& a, py::object b) { return mul(arg(b, "mul"), a); }, py::is_operator())
      .def("__truediv__", [](const Tensor& a, py::object b) { return div(a, arg(b, "div")); }, py::is_operator())
      .def("__rtruediv__", [](const Tensor& a, py::object b) { return div(arg(b, "div"), a); }, py::is_operator())
      .def("__iadd__", [](Tensor& a, py::object b) -> Tensor& { return a.add_(arg(b, "add_")); }, py::is_operator())
      .def("__isub__", [](Tensor& a, py::object b) -> Tensor& { return a.sub_(arg(b, "sub_")); }, py::is_operator())
      .def("__imul__", [](Tensor& a, py::object b) -> Tensor& { return a.mul_(arg(b, "mul_")); }, py::is_operator())
      .def("__itruediv__", [](Tensor& a, py::object b) -> Tensor& { return a.div_(arg(b, "div_")); }, py::is_operator());
}

}  // namespace ember::python
