// Bindings into ember._C._distributed: the DDP gradient reducer
// (distributed/reducer.h), driven by ember.nn.parallel.DistributedDataParallel.
#include <ember/distributed/reducer.h>

#include "bind.h"

namespace ember::python {

namespace {
// The tensors in a forward's output: nested tuples, lists and dicts.
void collect_tensors(py::handle obj, std::vector<Tensor>& out) {
  if (py::isinstance<Tensor>(obj)) {
    out.push_back(obj.cast<Tensor>());
  } else if (py::isinstance<py::dict>(obj)) {
    for (auto item : obj.cast<py::dict>()) collect_tensors(item.second, out);
  } else if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    for (auto item : obj) collect_tensors(item, out);
  }
}
}  // namespace

void init_distributed_reducer(py::module_& m) {
  using distributed::ProcessGroup;
  using distributed::Reducer;
  py::module_ d = distributed_module(m);
  py::class_<Reducer, std::shared_ptr<Reducer>>(d, "Reducer")
      .def(py::init([](std::vector<Tensor> params, std::shared_ptr<ProcessGroup> group, int64_t bucket_cap_bytes,
                       int64_t first_bucket_cap_bytes, bool find_unused_parameters, bool gradient_as_bucket_view,
                       std::vector<std::string> names) {
             distributed::ReducerOptions o;
             o.bucket_cap_bytes = bucket_cap_bytes;
             o.first_bucket_cap_bytes = first_bucket_cap_bytes;
             o.find_unused_parameters = find_unused_parameters;
             o.gradient_as_bucket_view = gradient_as_bucket_view;
             return std::make_shared<Reducer>(std::move(params), std::move(group), o, std::move(names));
           }),
           py::arg("params"), py::arg("process_group"), py::arg("bucket_cap_bytes") = 25 * 1024 * 1024,
           py::arg("first_bucket_cap_bytes") = 1024 * 1024, py::arg("find_unused_parameters") = false,
           py::arg("gradient_as_bucket_view") = false, py::arg("names") = std::vector<std::string>{})
      .def("prepare_for_backward", [](Reducer& r, py::object outputs) {
        std::vector<Tensor> tensors;
        collect_tensors(outputs, tensors);
        py::gil_scoped_release release;
        r.prepare_for_backward(tensors);
      }, py::arg("outputs"))
      .def("_bucket_indices", &Reducer::bucket_indices)
      .def("_unused_parameters", &Reducer::unused_parameters);
}

}  // namespace ember::python
