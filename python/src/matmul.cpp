// Bindings of the matmul family, the @ operator, and the CPU thread count
// (which covers the BLAS's threads as well as ember's own loops).
#include <pybind11/numpy.h>

#include "bind.h"

#include <ember/core/cpu/matmul.h>
#include <ember/core/cpu/parallel.h>

#include <string>

namespace ember::python {

void init_matmul(py::module_& m) {
  auto& cls = tensor_class();
  m.def("matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, py::arg("input"), py::arg("other"));
  m.def("mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); }, py::arg("input"), py::arg("mat2"));
  m.def("bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); }, py::arg("input"), py::arg("mat2"));
  m.def("mv", [](const Tensor& a, const Tensor& v) { return mv(a, v); }, py::arg("input"), py::arg("vec"));
  m.def("dot", [](const Tensor& a, const Tensor& b) { return dot(a, b); }, py::arg("input"), py::arg("other"));
  m.def("outer", [](const Tensor& a, const Tensor& b) { return outer(a, b); }, py::arg("input"), py::arg("vec2"));
  m.attr("ger") = m.attr("outer");
  m.def("addmm", [](const Tensor& input, const Tensor& m1, const Tensor& m2, py::object beta, py::object alpha) {
    return addmm(input, m1, m2, to_scalar(beta, "addmm"), to_scalar(alpha, "addmm"));
  }, py::arg("input"), py::arg("mat1"), py::arg("mat2"), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);

  cls.def("matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, py::arg("other"))
      .def("mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); }, py::arg("mat2"))
      .def("bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); }, py::arg("mat2"))
      .def("mv", [](const Tensor& a, const Tensor& v) { return mv(a, v); }, py::arg("vec"))
      .def("dot", [](const Tensor& a, const Tensor& b) { return dot(a, b); }, py::arg("other"))
      .def("outer", [](const Tensor& a, const Tensor& b) { return outer(a, b); }, py::arg("vec2"))
      .def("addmm", [](const Tensor& input, const Tensor& m1, const Tensor& m2, py::object beta, py::object alpha) {
        return addmm(input, m1, m2, to_scalar(beta, "addmm"), to_scalar(alpha, "addmm"));
      }, py::arg("mat1"), py::arg("mat2"), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1)
      // A numpy array operand becomes a tensor, as in torch (it used to leave the product to numpy).
      .def("__matmul__", [](const Tensor& a, py::object b) -> py::object {
        if (py::isinstance<Tensor>(b)) return py::cast(matmul(a, b.cast<Tensor>()));
        if (py::isinstance<py::array>(b)) {  // the two promoted to a common dtype, as torch gives it
          const Tensor other = tensor_from_data(b, std::nullopt, a.device());
          const DType common = promote_types(a.dtype(), other.dtype());
          return py::cast(matmul(a.to(common), other.to(common)));
        }
        return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      }, py::is_operator())
      .def("__rmatmul__", [](const Tensor& a, const Tensor& b) { return matmul(b, a); }, py::is_operator());

  m.def("set_num_threads", [](int n) {
    if (n <= 0) throw Error(str("set_num_threads: expected a positive number of threads, got ", n));
    cpu::set_num_threads(n);
  }, py::arg("int"));
  m.def("get_num_threads", [] { return cpu::get_num_threads(); });
  m.def("_blas_info", [] { return cpu::blas_info(); });

  // One C++ setting behind set_float32_matmul_precision and
  // ember.backends.cuda.matmul.allow_tf32 (python/ember/backends/cuda).
  m.def("set_float32_matmul_precision", [](const std::string& precision) {
    if (precision == "highest") {
      set_float32_matmul_precision(Float32MatmulPrecision::Highest);
    } else if (precision == "high") {
      set_float32_matmul_precision(Float32MatmulPrecision::High);
    } else if (precision == "medium") {
      set_float32_matmul_precision(Float32MatmulPrecision::Medium);
    } else {
      throw Error(str("set_float32_matmul_precision: invalid precision '", precision,
                      "', expected one of 'highest', 'high', 'medium'"));
    }
  }, py::arg("precision"));
  m.def("get_float32_matmul_precision", [] {
    switch (float32_matmul_precision()) {
      case Float32MatmulPrecision::High: return "high";
      case Float32MatmulPrecision::Medium: return "medium";
      default: return "highest";
    }
  });
}

}  // namespace ember::python
