// ember._C._cuda: devices, streams, events and the caching allocator's
// statistics behind ember.cuda, plus ember._C._build_info(). The calls go
// through the seam (cuda/cuda_api.h), so a CPU build binds the same names and
// answers "no GPU".
#include <ember/core/generator.h>
#include <ember/cuda/build_info.h>
#include <ember/cuda/cuda_api.h>

#include "bind.h"

namespace ember::python {

void init_cuda_extras(py::module_& c);  // cuda_extras.cpp

namespace {

py::dict stats_dict(const cuda::AllocatorStats& s) {
  py::dict d;
  d["allocated_bytes"] = s.allocated;
  d["peak_allocated_bytes"] = s.peak_allocated;
  d["reserved_bytes"] = s.reserved;
  d["peak_reserved_bytes"] = s.peak_reserved;
  d["requested_bytes"] = s.requested;
  d["active_blocks"] = s.active_blocks;
  d["segments"] = s.segments;
  d["num_device_alloc"] = s.raw_allocs;
  d["num_device_free"] = s.raw_frees;
  d["num_cache_flushes"] = s.cache_flushes;
  d["num_ooms"] = s.ooms;
  d["pending_frees"] = s.pending_frees;
  // The same counters under torch.cuda.memory_stats()'s names, so code
  // written for PyTorch reads them unchanged (num_ooms and num_device_* above
  // already have its names).
  d["allocated_bytes.all.current"] = s.allocated;
  d["allocated_bytes.all.peak"] = s.peak_allocated;
  d["reserved_bytes.all.current"] = s.reserved;
  d["reserved_bytes.all.peak"] = s.peak_reserved;
  d["requested_bytes.all.current"] = s.requested;
  d["active.all.current"] = s.active_blocks;
  d["segment.all.current"] = s.segments;
  d["num_alloc_retries"] = s.cache_flushes;
  return d;
}

}  // namespace

void init_cuda(py::module_& m) {
  m.def("_cuda_is_available", &cuda::is_available);
  m.def("_cuda_device_count", &cuda::device_count);
  m.def("_build_info", [] {
    py::dict d;
    for (const auto& [k, v] : cuda::build_info()) d[py::str(k)] = v;
    return d;
  });

  auto c = m.def_submodule("_cuda", "the CUDA seam behind ember.cuda");
  c.def("is_available", &cuda::is_available);
  c.def("device_count", &cuda::device_count);
  c.def("unavailable_reason", &cuda::unavailable_reason);
  c.def("driver_version", &cuda::driver_version);
  c.def("runtime_version", &cuda::runtime_version);
  c.def("cudnn_version", &cuda::cudnn_version);
  c.def("launch_blocking", &cuda::launch_blocking);
  c.def("current_device", &cuda::current_device);
  c.def("set_device", &cuda::set_device, py::arg("index"));
  c.def("synchronize", &cuda::synchronize, py::arg("index") = -1);

  py::class_<cuda::DeviceProperties>(c, "_CudaDeviceProperties")
      .def_readonly("name", &cuda::DeviceProperties::name)
      .def_readonly("total_memory", &cuda::DeviceProperties::total_memory)
      .def_readonly("major", &cuda::DeviceProperties::major)
      .def_readonly("minor", &cuda::DeviceProperties::minor)
      .def_readonly("multi_processor_count", &cuda::DeviceProperties::multi_processor_count)
      .def("__repr__", [](const cuda::DeviceProperties& p) {
        return str("_CudaDeviceProperties(name='", p.name, "', major=", p.major, ", minor=", p.minor,
                   ", total_memory=", p.total_memory >> 20, "MB, multi_processor_count=",
                   p.multi_processor_count, ")");
      });
  c.def("get_device_properties", &cuda::device_properties, py::arg("index") = -1);
  c.def("arch_problem", &cuda::arch_problem, py::arg("index") = -1);

  c.def("memory_stats", [](int i) { return stats_dict(cuda::memory_stats(i)); }, py::arg("index") = -1);
  c.def("reset_peak_memory_stats", &cuda::reset_peak_memory_stats, py::arg("index") = -1);
  c.def("empty_cache", &cuda::empty_cache);
  c.def("memory_summary", &cuda::memory_summary, py::arg("index") = -1);
  init_cuda_extras(c);
  c.def("mem_get_info", [](int i) {
    const auto info = cuda::mem_get_info(i);
    return py::make_tuple(info.free, info.total);
  }, py::arg("index") = -1);
  c.def("manual_seed", [](uint64_t seed, int index) {
    default_generator(Device(DeviceType::CUDA, index)).manual_seed(seed);
  }, py::arg("seed"), py::arg("index"));
  auto generator_of = [](int index) -> Generator& { return default_generator(Device(DeviceType::CUDA, index)); };
  c.def("get_rng_state", [generator_of](int index) { return generator_of(index).get_state(); }, py::arg("index"));
  c.def("set_rng_state", [generator_of](const Tensor& state, int index) { generator_of(index).set_state(state); },
        py::arg("new_state"), py::arg("index"));
  c.def("seed", [generator_of](int index) { return generator_of(index).seed(); }, py::arg("index"));
  c.def("initial_seed", [generator_of](int index) { return generator_of(index).initial_seed(); }, py::arg("index"));

  py::class_<cuda::Stream>(c, "_Stream")
      .def_readonly("device_index", &cuda::Stream::device)
      .def_property_readonly("cuda_stream", [](const cuda::Stream& s) { return s.id(); })
      .def("__eq__", [](const cuda::Stream& a, const cuda::Stream& b) { return a == b; })
      .def("__hash__", [](const cuda::Stream& s) { return py::hash(py::make_tuple(s.device, s.id())); });
  c.def("current_stream", &cuda::current_stream, py::arg("index") = -1);
  c.def("default_stream", &cuda::default_stream, py::arg("index") = -1);
  c.def("new_stream", &cuda::new_stream, py::arg("index") = -1, py::arg("high_priority") = false);
  c.def("set_current_stream", &cuda::set_current_stream, py::arg("stream"));
  c.def("stream_synchronize", &cuda::stream_synchronize, py::arg("stream"));
  c.def("stream_query", &cuda::stream_query, py::arg("stream"));
  // Tensor.record_stream(stream): stream is an ember.cuda.Stream (or its _Stream).
  tensor_class().def("record_stream", [](const Tensor& self, const py::object& stream) {
    EMBER_CHECK(self.device().is_cuda(), Error, "record_stream: expected a CUDA tensor, got one on ",
                self.device().str());
    const py::object handle = py::hasattr(stream, "_s") ? stream.attr("_s") : stream;
    EMBER_CHECK(py::isinstance<cuda::Stream>(handle), TypeError,
                "record_stream: expected an ember.cuda.Stream, got ", py::str(py::type::of(stream)).cast<std::string>());
    cuda::record_stream(self, handle.cast<cuda::Stream>());
  }, py::arg("stream"));

  py::class_<cuda::Event>(c, "_Event")
      .def(py::init<bool, bool>(), py::arg("enable_timing") = false, py::arg("blocking") = false)
      .def("record", &cuda::Event::record, py::arg("stream"))
      .def("wait", &cuda::Event::wait, py::arg("stream"))
      .def("query", &cuda::Event::query)
      .def("synchronize", &cuda::Event::synchronize)
      .def("elapsed_time", &cuda::Event::elapsed_time, py::arg("end_event"))
      .def_property_readonly("recorded", &cuda::Event::recorded);
}

}  // namespace ember::python
