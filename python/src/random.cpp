// Bindings of the random family.
#include "bind.h"

namespace ember::python {

void init_random(py::module_& m) {}

}  // namespace ember::python
