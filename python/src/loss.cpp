// Bindings of the loss family (into ember._C._nn where nn.functional uses them).
#include "bind.h"

namespace ember::python {

void init_loss(py::module_& m) {}

}  // namespace ember::python
