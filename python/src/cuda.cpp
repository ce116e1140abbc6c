// Bindings of the cuda family.
#include "bind.h"

namespace ember::python {

void init_cuda(py::module_& m) {}

}  // namespace ember::python
