// ember._C._fft_c2c / _fft_r2c / _fft_c2r, the primitives python/ember/fft.py
// builds ember.fft on.
#include <ember/core/ops/fft.h>

#include "bind.h"

namespace ember::python {

void init_fft(py::module_& m) {
  m.def("_fft_c2c", [](const Tensor& z, py::handle dims, bool forward, double scale) {
    return fft_c2c(z, to_int_list(dims, "fft"), forward, scale);
  }, py::arg("input"), py::arg("dims"), py::arg("forward"), py::arg("scale"));
  m.def("_fft_r2c", &fft_r2c, py::arg("input"), py::arg("dim"), py::arg("scale"));
  m.def("_fft_c2r", &fft_c2r, py::arg("input"), py::arg("dim"), py::arg("n"), py::arg("scale"));
}

}  // namespace ember::python
