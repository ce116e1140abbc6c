// Bindings of the unary family.
#include "bind.h"

namespace ember::python {

void init_unary(py::module_& m) {}

}  // namespace ember::python
