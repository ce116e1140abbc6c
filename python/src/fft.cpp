// ember._C._fft_c2c, the primitive python/ember/fft.py builds ember.fft on.
#include <ember/core/ops/fft.h>

#include "bind.h"

namespace ember::python {

void init_fft(py::module_& m) {
  m.def("_fft_c2c", [](const Tensor& z, py::handle dims, bool forward, double scale) {
    return fft_c2c(z, to_int_list(dims, "fft"), forward, scale);
  }, py::arg("input"), py::arg("dims"), py::arg("forward"), py::arg("scale"));
}

}  // namespace ember::python
