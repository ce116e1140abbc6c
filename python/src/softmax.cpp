// Bindings of the softmax family.
#include "bind.h"

namespace ember::python {

void init_softmax(py::module_& m) {}

}  // namespace ember::python
