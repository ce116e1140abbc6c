// Bindings of the conv family (into ember._C._nn where nn.functional uses them).
#include "bind.h"

namespace ember::python {

void init_conv(py::module_& m) {}

}  // namespace ember::python
