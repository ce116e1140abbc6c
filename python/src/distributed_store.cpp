// Bindings into ember._C._distributed (see distributed/).
#include "bind.h"

namespace ember::python {

void init_distributed_store(py::module_& m) {
  py::module_ d = distributed_module(m);
  (void)d;
}

}  // namespace ember::python
