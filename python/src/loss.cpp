// Bindings of the loss family (into ember._C._nn where nn.functional uses them),
// with torch.nn.functional's signatures, including the legacy size_average and
// reduce arguments.
#include "bind.h"

#include <ember/core/ops/loss.h>

namespace ember::python {

namespace {

Tensor optional_tensor(const py::object& obj) { return obj.is_none() ? Tensor() : obj.cast<Tensor>(); }

// torch's legacy rule: size_average / reduce (when either is given) override reduction.
std::string reduction_of(const py::object& size_average, const py::object& reduce, const std::string& reduction) {
  if (size_average.is_none() && reduce.is_none()) return reduction;
  const bool avg = size_average.is_none() || size_average.cast<bool>();
  const bool red = reduce.is_none() || reduce.cast<bool>();
  if (!red) return "none";
  return avg ? "mean" : "sum";
}

}  // namespace

void init_loss(py::module_& m) {
  py::module_ nn = nn_module(m);
  const auto none = py::none();
  nn.def(
      "cross_entropy",
      [](const Tensor& input, const Tensor& target, py::object weight, py::object size_average, int64_t ignore_index,
         py::object reduce, const std::string& reduction, double label_smoothing) {
        return cross_entropy(input, target, optional_tensor(weight), ignore_index,
                             reduction_of(size_average, reduce, reduction), label_smoothing);
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = none, py::arg("size_average") = none,
      py::arg("ignore_index") = -100, py::arg("reduce") = none, py::arg("reduction") = "mean",
      py::arg("label_smoothing") = 0.0);
  nn.def(
      "nll_loss",
      [](const Tensor& input, const Tensor& target, py::object weight, py::object size_average, int64_t ignore_index,
         py::object reduce, const std::string& reduction) {
        return nll_loss(input, target, optional_tensor(weight), ignore_index,
                        reduction_of(size_average, reduce, reduction));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = none, py::arg("size_average") = none,
      py::arg("ignore_index") = -100, py::arg("reduce") = none, py::arg("reduction") = "mean");
  auto pointwise = [&](const char* name, Tensor (*fn)(const Tensor&, const Tensor&, const std::string&)) {
    nn.def(
        name,
        [fn](const Tensor& input, const Tensor& target, py::object size_average, py::object reduce,
             const std::string& reduction) { return fn(input, target, reduction_of(size_average, reduce, reduction)); },
        py::arg("input"), py::arg("target"), py::arg("size_average") = py::none(), py::arg("reduce") = py::none(),
        py::arg("reduction") = "mean");
  };
  pointwise("mse_loss", [](const Tensor& a, const Tensor& b, const std::string& r) { return mse_loss(a, b, r); });
  pointwise("l1_loss", [](const Tensor& a, const Tensor& b, const std::string& r) { return l1_loss(a, b, r); });
  nn.def(
      "smooth_l1_loss",
      [](const Tensor& input, const Tensor& target, py::object size_average, py::object reduce,
         const std::string& reduction, double beta) {
        return smooth_l1_loss(input, target, reduction_of(size_average, reduce, reduction), beta);
      },
      py::arg("input"), py::arg("target"), py::arg("size_average") = none, py::arg("reduce") = none,
      py::arg("reduction") = "mean", py::arg("beta") = 1.0);
  nn.def(
      "binary_cross_entropy",
      [](const Tensor& input, const Tensor& target, py::object weight, py::object size_average, py::object reduce,
         const std::string& reduction) {
        return binary_cross_entropy(input, target, optional_tensor(weight),
                                    reduction_of(size_average, reduce, reduction));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = none, py::arg("size_average") = none,
      py::arg("reduce") = none, py::arg("reduction") = "mean");
  nn.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& input, const Tensor& target, py::object weight, py::object size_average, py::object reduce,
         const std::string& reduction, py::object pos_weight) {
        return binary_cross_entropy_with_logits(input, target, optional_tensor(weight),
                                                reduction_of(size_average, reduce, reduction),
                                                optional_tensor(pos_weight));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = none, py::arg("size_average") = none,
      py::arg("reduce") = none, py::arg("reduction") = "mean", py::arg("pos_weight") = none);
  nn.def(
      "kl_div",
      [](const Tensor& input, const Tensor& target, py::object size_average, py::object reduce,
         const std::string& reduction, bool log_target) {
        return kl_div(input, target, reduction_of(size_average, reduce, reduction), log_target);
      },
      py::arg("input"), py::arg("target"), py::arg("size_average") = none, py::arg("reduce") = none,
      py::arg("reduction") = "mean", py::arg("log_target") = false);
}

}  // namespace ember::python
