// Bindings of the norm family (into ember._C._nn where nn.functional uses them),
// with torch.nn.functional's names, argument names and defaults.
#include "bind.h"

#include <ember/core/ops/norm.h>

namespace ember::python {


namespace {
Tensor optional_tensor(const py::object& obj) { return obj.is_none() ? Tensor() : obj.cast<Tensor>(); }
}  // namespace

void init_norm(py::module_& m) {
  py::module_ nn = nn_module(m);
  nn.def(
      "batch_norm",
      [](const Tensor& input, py::object running_mean, py::object running_var, py::object weight, py::object bias,
         bool training, double momentum, double eps) {
        return batch_norm(input, optional_tensor(running_mean), optional_tensor(running_var), optional_tensor(weight),
                          optional_tensor(bias), training, momentum, eps);
      },
      py::arg("input"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight") = py::none(),
      py::arg("bias") = py::none(), py::arg("training") = false, py::arg("momentum") = 0.1, py::arg("eps") = 1e-5);
  nn.def(
      "layer_norm",
      [](const Tensor& input, py::object normalized_shape, py::object weight, py::object bias, double eps) {
        return layer_norm(input, to_int_list(normalized_shape, "layer_norm"), optional_tensor(weight),
                          optional_tensor(bias), eps);
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
      py::arg("eps") = 1e-5);
  nn.def(
      "group_norm",
      [](const Tensor& input, int64_t num_groups, py::object weight, py::object bias, double eps) {
        return group_norm(input, num_groups, optional_tensor(weight), optional_tensor(bias), eps);
      },
      py::arg("input"), py::arg("num_groups"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
      py::arg("eps") = 1e-5);
  nn.def(
      "rms_norm",
      [](const Tensor& input, py::object normalized_shape, py::object weight, std::optional<double> eps) {
        return rms_norm(input, to_int_list(normalized_shape, "rms_norm"), optional_tensor(weight), eps);
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("eps") = py::none());
}

}  // namespace ember::python
