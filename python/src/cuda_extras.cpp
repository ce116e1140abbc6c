// ember._C._cuda additions: the per-process memory fraction and NVTX.
#include <ember/cuda/memory_fraction.h>
#include <ember/cuda/nvtx.h>

#include "bind.h"

namespace ember::python {

void init_cuda_extras(py::module_& c) {
  c.def("set_per_process_memory_fraction", &cuda::set_per_process_memory_fraction, py::arg("fraction"),
        py::arg("index") = -1);
  c.def("get_per_process_memory_fraction", &cuda::get_per_process_memory_fraction, py::arg("index") = -1);
  c.def("nvtx_range_push", &cuda::nvtx_range_push, py::arg("msg"));
  c.def("nvtx_range_pop", &cuda::nvtx_range_pop);
  c.def("nvtx_range_start", &cuda::nvtx_range_start, py::arg("msg"));
  c.def("nvtx_range_end", &cuda::nvtx_range_end, py::arg("range_id"));
  c.def("nvtx_mark", &cuda::nvtx_mark, py::arg("msg"));
}

}  // namespace ember::python
