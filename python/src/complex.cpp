// Complex tensors from Python: view_as_real / view_as_complex, complex,
// polar, Tensor.real / .imag, conj, angle, sgn (core/ops/complex.h).
#include <ember/core/ops/complex.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/unary.h>

#include "bind.h"

namespace ember::python {

namespace {
Tensor sgn_any(const Tensor& t) { return is_complex(t.dtype()) ? complex_ops::sgn(t) : sign(t); }

Tensor conj_physical_any(const Tensor& t) { return is_complex(t.dtype()) ? conj(t) : t.clone(); }

bool is_complex_tensor(const Tensor& t) { return is_complex(t.dtype()); }

// A real tensor is its own real part and conjugate: the same Python object, as torch.
template <Tensor (*F)(const Tensor&)>
py::object self_if_real(py::object self) {
  const Tensor t = self.cast<Tensor>();
  return is_complex(t.dtype()) ? py::cast(F(t)) : self;
}

// `x.real = value` writes value into the real parts, as torch.
void set_part(Tensor& t, py::handle value, bool imaginary) {
  Tensor part = imaginary ? imag(t) : real(t);
  part.copy_(to_tensor_arg(value, imaginary ? "imag" : "real"));
}
}  // namespace

void init_complex(py::module_& m) {
  m.def("view_as_real", &view_as_real, py::arg("input"));
  m.def("view_as_complex", &view_as_complex, py::arg("input"));
  m.def("real", &self_if_real<real>, py::arg("input"));
  m.def("imag", &imag, py::arg("input"));
  m.def("complex", &complex, py::arg("real"), py::arg("imag"));
  m.def("polar", &polar, py::arg("abs"), py::arg("angle"));
  m.def("conj", &self_if_real<conj>, py::arg("input"));
  m.def("conj_physical", &conj_physical_any, py::arg("input"));
  m.def("angle", &angle, py::arg("input"));
  m.def("sgn", &sgn_any, py::arg("input"));
  m.def("is_complex", &is_complex_tensor, py::arg("input"));
  tensor_class()
      .def_property("real", &self_if_real<real>, [](Tensor& t, py::handle v) { set_part(t, v, false); })
      .def_property("imag", &imag, [](Tensor& t, py::handle v) { set_part(t, v, true); })
      .def("conj", &self_if_real<conj>)
      .def("conj_physical", &conj_physical_any)
      .def("angle", &angle)
      .def("sgn", &sgn_any)
      .def("is_complex", &is_complex_tensor);
}

}  // namespace ember::python
