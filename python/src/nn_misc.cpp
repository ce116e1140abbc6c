// Bindings of embedding and dropout into ember._C._nn (called from init_norm,
// so module.cpp stays as it is).
#include "bind.h"

#include <ember/core/ops/nn_misc.h>

namespace ember::python {

void init_nn_misc(py::module_& m) {
  py::module_ nn = nn_module(m);
  nn.def(
      "embedding",
      [](const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx, py::object max_norm,
         double norm_type, bool scale_grad_by_freq, bool sparse) {
        if (!max_norm.is_none()) throw NotImplementedError("embedding: max_norm is not supported");
        if (sparse) throw NotImplementedError("embedding: sparse gradients are not supported");
        (void)norm_type;
        return embedding(input, weight, padding_idx, scale_grad_by_freq);
      },
      py::arg("input"), py::arg("weight"), py::arg("padding_idx") = py::none(), py::arg("max_norm") = py::none(),
      py::arg("norm_type") = 2.0, py::arg("scale_grad_by_freq") = false, py::arg("sparse") = false);
  // torch.native_dropout(input, p, train) -> (output, bool mask), and its backward.
  m.def(
      "native_dropout",
      [](const Tensor& input, double p, std::optional<bool> train) {
        auto [out, mask] = native_dropout(input, p, train);
        return py::make_tuple(out, mask);
      },
      py::arg("input"), py::arg("p"), py::arg("train"));
  m.def("native_dropout_backward", &native_dropout_backward, py::arg("grad_output"), py::arg("mask"),
        py::arg("scale"));
  nn.def("dropout", &dropout, py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true,
         py::arg("inplace") = false);
  for (const char* name : {"dropout1d", "dropout2d", "dropout3d"}) {
    nn.def(
        name,
        [name](const Tensor& input, double p, bool training, bool inplace) {
          return feature_dropout(input, p, training, inplace, name);
        },
        py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true, py::arg("inplace") = false);
  }
}

}  // namespace ember::python
