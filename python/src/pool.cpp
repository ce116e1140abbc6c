// Bindings of the pool family (into ember._C._nn where nn.functional uses them).
#include "bind.h"

namespace ember::python {

void init_pool(py::module_& m) {}

}  // namespace ember::python
