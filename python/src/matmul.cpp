// Bindings of the matmul family.
#include "bind.h"

namespace ember::python {

void init_matmul(py::module_& m) {}

}  // namespace ember::python
