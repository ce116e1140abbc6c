// ember.cuda queries. A CPU build answers "no GPU" (cuda/no_cuda.cpp).
#include "bind.h"

namespace ember::python {

void init_cuda(py::module_& m) {
  m.def("_cuda_is_available", &cuda::is_available);
  m.def("_cuda_device_count", &cuda::device_count);
}

}  // namespace ember::python
