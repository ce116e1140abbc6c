// Bindings of autocast's thread-local state (ember.is_autocast_enabled, ...;
// the context manager itself is Python: ember/amp/autocast_mode.py) and of the
// two private ops behind ember.amp.GradScaler.
#include <ember/core/autocast.h>
#include <ember/core/ops/amp.h>

#include "bind.h"

namespace ember::python {
namespace {

DeviceType autocast_device(const std::string& device_type) {
  if (device_type == "cpu") return DeviceType::CPU;
  if (device_type == "cuda") return DeviceType::CUDA;
  throw Error(str("autocast: unsupported device_type '", device_type,
                  "'; ember supports autocast on 'cpu' and 'cuda'"));
}

}  // namespace

void init_autocast(py::module_& m) {
  m.def("is_autocast_enabled",
        [](std::optional<std::string> device_type) {
          return autocast::is_enabled(autocast_device(device_type.value_or("cuda")));
        },
        py::arg("device_type") = py::none());
  m.def("set_autocast_enabled",
        [](const std::string& device_type, bool enabled) {
          autocast::set_enabled(autocast_device(device_type), enabled);
        },
        py::arg("device_type"), py::arg("enabled"));
  m.def("get_autocast_dtype",
        [](const std::string& device_type) { return dtype_object(autocast::get_dtype(autocast_device(device_type))); },
        py::arg("device_type"));
  m.def("set_autocast_dtype",
        [](const std::string& device_type, py::handle dtype) {
          autocast::set_dtype(autocast_device(device_type), to_dtype(dtype));
        },
        py::arg("device_type"), py::arg("dtype"));
  // The older per-device spellings torch still has.
  m.def("is_autocast_cpu_enabled", [] { return autocast::is_enabled(DeviceType::CPU); });
  m.def("get_autocast_cpu_dtype", [] { return dtype_object(autocast::get_dtype(DeviceType::CPU)); });
  m.def("get_autocast_gpu_dtype", [] { return dtype_object(autocast::get_dtype(DeviceType::CUDA)); });
  m.def("is_autocast_cache_enabled", &autocast::is_cache_enabled);
  m.def("set_autocast_cache_enabled", &autocast::set_cache_enabled, py::arg("enabled"));
  m.def("clear_autocast_cache", &autocast::clear_cache);
  m.def("autocast_increment_nesting", &autocast::increment_nesting);
  m.def("autocast_decrement_nesting", &autocast::decrement_nesting);
  m.def("_autocast_cache_size", &autocast::cache_size);
  m.def("_autocast_cache_casts", &autocast::cache_casts);

  m.def("_amp_foreach_non_finite_check_and_unscale_",
        [](const std::vector<Tensor>& grads, Tensor found_inf, const Tensor& inv_scale) {
          amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale);
        },
        py::arg("self"), py::arg("found_inf"), py::arg("inv_scale"));
  m.def("_amp_update_scale_",
        [](Tensor self, Tensor growth_tracker, const Tensor& found_inf, double scale_growth_factor,
           double scale_backoff_factor, int64_t growth_interval) {
          return amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                                   growth_interval);
        },
        py::arg("self"), py::arg("growth_tracker"), py::arg("found_inf"), py::arg("scale_growth_factor"),
        py::arg("scale_backoff_factor"), py::arg("growth_interval"));
}

}  // namespace ember::python
