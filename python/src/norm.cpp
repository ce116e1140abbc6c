// Bindings of the norm family (into ember._C._nn where nn.functional uses them),
// with torch.nn.functional's names, argument names and defaults.
#include "bind.h"

#include <ember/core/ops/norm.h>

namespace ember::python {

void init_norm(py::module_& m) {
  py::module_ nn = nn_module(m);
  nn.def(
      "batch_norm",
      [](const Tensor& input, py::object running_mean, py::object running_var, py::object weight, py::object bias,
         bool training, double momentum, double eps) {
        const char* op = "batch_norm";
        return batch_norm(input, optional_tensor_arg(running_mean, op, "running_mean"),
                          optional_tensor_arg(running_var, op, "running_var"), optional_tensor_arg(weight, op, "weight"),
                          optional_tensor_arg(bias, op, "bias"), training, momentum, eps);
      },
      py::arg("input"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight") = py::none(),
      py::arg("bias") = py::none(), py::arg("training") = false, py::arg("momentum") = 0.1, py::arg("eps") = 1e-5);
  nn.def(
      "layer_norm",
      [](const Tensor& input, py::object normalized_shape, py::object weight, py::object bias, double eps) {
        const char* op = "layer_norm";
        return layer_norm(input, to_int_list(normalized_shape, op), optional_tensor_arg(weight, op, "weight"),
                          optional_tensor_arg(bias, op, "bias"), eps);
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
      py::arg("eps") = 1e-5);
  nn.def(
      "group_norm",
      [](const Tensor& input, int64_t num_groups, py::object weight, py::object bias, double eps) {
        return group_norm(input, num_groups, optional_tensor_arg(weight, "group_norm", "weight"),
                          optional_tensor_arg(bias, "group_norm", "bias"), eps);
      },
      py::arg("input"), py::arg("num_groups"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
      py::arg("eps") = 1e-5);
  nn.def(
      "rms_norm",
      [](const Tensor& input, py::object normalized_shape, py::object weight, std::optional<double> eps) {
        return rms_norm(input, to_int_list(normalized_shape, "rms_norm"), optional_tensor_arg(weight, "rms_norm", "weight"),
                        eps);
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("eps") = py::none());
}

}  // namespace ember::python
