// Bindings into ember._C._distributed: ReduceOp, Work, ProcessGroup and its
// collectives, make_process_group, and FileStore (see distributed/).
// ember.distributed (python/ember/distributed/distributed_c10d.py) builds
// torch.distributed's API on these. Every call that may block releases the
// GIL, so other Python threads (and the group's own threads) keep running.
#include <pybind11/chrono.h>

#include <ember/distributed/file_store.h>
#include <ember/distributed/process_group.h>

#include "bind.h"

namespace ember::python {

namespace {

using namespace ember::distributed;
using DistOp = ember::distributed::ReduceOp;
using Release = py::call_guard<py::gil_scoped_release>;

// Any bound Store (TCPStore, PrefixStore, FileStore, ...) as the C++ base.
std::shared_ptr<Store> to_store(py::handle obj) {
  try {
    return obj.cast<std::shared_ptr<Store>>();
  } catch (const py::cast_error&) {
  }
  // Before ember.distributed.Store is bound (it lives in distributed_store.cpp)
  // FileStore has no registered base: accept it directly.
  try {
    return obj.cast<std::shared_ptr<FileStore>>();
  } catch (const py::cast_error&) {
  }
  throw TypeError(str("init_process_group: store must be an ember.distributed Store (TCPStore, FileStore, "
                      "PrefixStore), got ", type_name(obj)));
}

// The group as Python holds it: the last reference, dropped with the GIL
// held, frees it without the GIL, since joining its threads may wait for a
// tensor that needs the GIL to be freed (one made by from_numpy).
std::shared_ptr<ProcessGroup> without_gil_on_release(std::shared_ptr<ProcessGroup> pg) {
  ProcessGroup* raw = pg.get();
  return std::shared_ptr<ProcessGroup>(raw, [pg = std::move(pg)](ProcessGroup*) mutable {
    if (PyGILState_Check()) {
      py::gil_scoped_release release;
      pg.reset();
    } else {
      pg.reset();
    }
  });
}

Bytes to_bytes(py::handle v) {
  if (py::isinstance<py::bytes>(v)) {
    const std::string s = v.cast<std::string>();
    return Bytes(s.begin(), s.end());
  }
  if (py::isinstance<py::str>(v)) {
    const std::string s = v.cast<std::string>();
    return Bytes(s.begin(), s.end());
  }
  throw TypeError(str("Store.set: value must be str or bytes, got ", type_name(v)));
}

template <class Class>
void bind_file_store(Class& c) {
  c.def(py::init([](const std::string& file_name, int world_size) {
          (void)world_size;  // accepted for PyTorch's signature; the file counts its users itself
          return std::make_shared<FileStore>(file_name);
        }),
        py::arg("file_name"), py::arg("world_size") = -1)
      .def("set", [](FileStore& s, const std::string& k, py::handle v) { s.set(k, to_bytes(v)); })
      .def("get",
           [](FileStore& s, const std::string& k) {
             Bytes b;
             {
               py::gil_scoped_release release;
               b = s.get(k);
             }
             return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
           })
      .def("add", &FileStore::add, Release())
      .def("check", &FileStore::check, Release())
      .def("delete_key", &FileStore::delete_key)
      .def("num_keys", &FileStore::num_keys)
      .def(
          "wait",
          [](FileStore& s, const std::vector<std::string>& keys, std::optional<Milliseconds> timeout) {
            s.wait(keys, timeout.value_or(s.timeout()));
          },
          py::arg("keys"), py::arg("timeout") = py::none(), Release())
      .def_property("timeout", &FileStore::timeout, &FileStore::set_timeout)
      .def("set_timeout", &FileStore::set_timeout)
      .def_property_readonly("path", &FileStore::path);
}

}  // namespace

void init_distributed_pg(py::module_& m) {
  py::module_ d = distributed_module(m);

  py::enum_<DistOp>(d, "ReduceOp")
      .value("SUM", DistOp::Sum)
      .value("AVG", DistOp::Avg)
      .value("PRODUCT", DistOp::Product)
      .value("MIN", DistOp::Min)
      .value("MAX", DistOp::Max);

  py::class_<Work, std::shared_ptr<Work>>(d, "Work")
      .def("wait",
           [](Work& w) {
             // In slices, so that Ctrl-C (SIGINT) interrupts a stuck collective.
             for (;;) {
               bool done;
               {
                 py::gil_scoped_release release;
                 done = w.wait_for(Milliseconds(100));
               }
               if (done) return true;
               if (PyErr_CheckSignals() != 0) throw py::error_already_set();
             }
           })
      .def("is_completed", &Work::is_completed);

  py::class_<ProcessGroup, std::shared_ptr<ProcessGroup>>(d, "ProcessGroup")
      .def("rank", &ProcessGroup::rank)
      .def("size", &ProcessGroup::size)
      .def_property_readonly("backend", &ProcessGroup::backend)
      .def("name", &ProcessGroup::backend)
      .def("all_reduce", &ProcessGroup::all_reduce, py::arg("tensor"), py::arg("op"), Release())
      .def("broadcast", &ProcessGroup::broadcast, py::arg("tensor"), py::arg("root"), Release())
      .def("reduce", &ProcessGroup::reduce, py::arg("tensor"), py::arg("root"), py::arg("op"), Release())
      .def(
          "all_gather",
          [](ProcessGroup& g, std::vector<Tensor> outputs, const Tensor& input) { return g.all_gather(outputs, input); },
          py::arg("outputs"), py::arg("input"), Release())
      .def("all_gather_into_tensor", &ProcessGroup::all_gather_into_tensor, py::arg("output"), py::arg("input"),
           Release())
      .def("reduce_scatter_tensor", &ProcessGroup::reduce_scatter_tensor, py::arg("output"), py::arg("input"),
           py::arg("op"), Release())
      .def(
          "gather",
          [](ProcessGroup& g, std::vector<Tensor> outputs, const Tensor& input, int root) {
            return g.gather(outputs, input, root);
          },
          py::arg("outputs"), py::arg("input"), py::arg("root"), Release())
      .def("scatter", &ProcessGroup::scatter, py::arg("output"), py::arg("inputs"), py::arg("root"), Release())
      .def("barrier", &ProcessGroup::barrier, Release())
      .def("send", &ProcessGroup::send, py::arg("tensor"), py::arg("dst"), py::arg("tag"), Release())
      .def("recv", &ProcessGroup::recv, py::arg("tensor"), py::arg("src"), py::arg("tag"), Release())
      .def("all_to_all", &ProcessGroup::all_to_all, py::arg("output"), py::arg("input"),
           py::arg("output_splits") = std::vector<int64_t>{}, py::arg("input_splits") = std::vector<int64_t>{},
           Release())
      .def(
          "batch_send_recv",
          // messages: (is_send, tensor, peer group rank, tag) tuples
          [](ProcessGroup& g, const std::vector<std::tuple<bool, Tensor, int, int>>& messages) {
            std::vector<P2PMessage> ms;
            for (const auto& [is_send, tensor, peer, tag] : messages) ms.push_back({is_send, tensor, peer, tag});
            return g.batch_send_recv(ms);
          },
          py::arg("messages"), Release());

  d.def(
      "make_process_group",
      [](const std::string& backend, py::handle store_obj, int rank, int size, Milliseconds timeout,
         const std::string& prefix, const std::string& master_addr) {
        std::shared_ptr<Store> store = to_store(store_obj);
        py::gil_scoped_release release;
        if (!prefix.empty()) store = std::make_shared<PrefixStore>(prefix, store);
        store->set_timeout(timeout);
        ProcessGroupOptions options;
        options.timeout = timeout;
        options.master_addr = master_addr;
        return without_gil_on_release(make_process_group(backend, store, rank, size, options));
      },
      py::arg("backend"), py::arg("store"), py::arg("rank"), py::arg("size"),
      py::arg("timeout") = kDefaultTimeout, py::arg("prefix") = "", py::arg("master_addr") = "");
  d.def("gloo_available", &gloo_available);
  d.def("nccl_available", &nccl_available);
  d.def("_nccl_runtime_version", &nccl_runtime_version);

  // FileStore derives from Store when distributed_store.cpp has bound it.
  if (py::detail::get_type_info(typeid(Store))) {
    py::class_<FileStore, Store, std::shared_ptr<FileStore>> c(d, "FileStore");
    bind_file_store(c);
  } else {
    py::class_<FileStore, std::shared_ptr<FileStore>> c(d, "FileStore");
    bind_file_store(c);
  }
}

}  // namespace ember::python
