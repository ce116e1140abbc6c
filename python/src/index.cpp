// Bindings of the index family.
#include "bind.h"

namespace ember::python {

void init_index(py::module_& m) {}

}  // namespace ember::python
