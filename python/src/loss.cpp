// Bindings of the loss family (into ember._C._nn where nn.functional uses them),
// with torch.nn.functional's signatures, including the legacy size_average and
// reduce arguments.
#include "bind.h"

#include <ember/core/ops/ctc.h>
#include <ember/core/ops/loss.h>

namespace ember::python {

namespace {

// torch's legacy rule: size_average / reduce (when either is given) override reduction, with a warning.
std::string reduction_of(const py::object& size_average, const py::object& reduce, const std::string& reduction,
                         const char* op) {
  if (size_average.is_none() && reduce.is_none()) return reduction;
  auto flag = [op](const py::object& v, const char* name) {
    return v.is_none() || cast_arg<bool>(v, op, name, "a bool or None");
  };
  const bool avg = flag(size_average, "size_average");
  const bool red = flag(reduce, "reduce");
  const std::string legacy = !red ? "none" : avg ? "mean" : "sum";
  // torch's warning (python/ember/nn/_reduction.py gives it for the losses written in Python).
  const std::string message = "size_average and reduce args will be deprecated, please use reduction='" + legacy +
                              "' instead.";
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
  return legacy;
}

}  // namespace

void init_loss(py::module_& m) {
  py::module_ nn = nn_module(m);
  const auto none = py::none();
  // ctc_loss's recursion on the CPU (nn/_functional_ctc.py checks and reduces around it).
  nn.def("_ctc_alignment_nll", &ctc_alignment_nll, py::arg("log_probs"), py::arg("extended"),
         py::arg("input_lengths"), py::arg("target_lengths"), py::arg("blank"));
  nn.def(
      "cross_entropy",
      [](const Tensor& input, const Tensor& target, py::object weight, py::object size_average, int64_t ignore_index,
         py::object reduce, const std::string& reduction, double label_smoothing) {
        return cross_entropy(input, target, optional_tensor_arg(weight, "cross_entropy", "weight"), ignore_index,
                             reduction_of(size_average, reduce, reduction, "cross_entropy"), label_smoothing);
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = none, py::arg("size_average") = none,
      py::arg("ignore_index") = -100, py::arg("reduce") = none, py::arg("reduction") = "mean",
      py::arg("label_smoothing") = 0.0);
  nn.def(
      "nll_loss",
      [](const Tensor& input, const Tensor& target, py::object weight, py::object size_average, int64_t ignore_index,
         py::object reduce, const std::string& reduction) {
        return nll_loss(input, target, optional_tensor_arg(weight, "nll_loss", "weight"), ignore_index,
                        reduction_of(size_average, reduce, reduction, "nll_loss"));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = none, py::arg("size_average") = none,
      py::arg("ignore_index") = -100, py::arg("reduce") = none, py::arg("reduction") = "mean");
  auto pointwise = [&](const char* name, Tensor (*fn)(const Tensor&, const Tensor&, const std::string&)) {
    nn.def(
        name,
        [fn, name](const Tensor& input, const Tensor& target, py::object size_average, py::object reduce,
                   const std::string& reduction) {
          return fn(input, target, reduction_of(size_average, reduce, reduction, name));
        },
        py::arg("input"), py::arg("target"), py::arg("size_average") = py::none(), py::arg("reduce") = py::none(),
        py::arg("reduction") = "mean");
  };
  pointwise("mse_loss", [](const Tensor& a, const Tensor& b, const std::string& r) { return mse_loss(a, b, r); });
  pointwise("l1_loss", [](const Tensor& a, const Tensor& b, const std::string& r) { return l1_loss(a, b, r); });
  nn.def(
      "smooth_l1_loss",
      [](const Tensor& input, const Tensor& target, py::object size_average, py::object reduce,
         const std::string& reduction, double beta) {
        return smooth_l1_loss(input, target, reduction_of(size_average, reduce, reduction, "smooth_l1_loss"), beta);
      },
      py::arg("input"), py::arg("target"), py::arg("size_average") = none, py::arg("reduce") = none,
      py::arg("reduction") = "mean", py::arg("beta") = 1.0);
  nn.def(
      "binary_cross_entropy",
      [](const Tensor& input, const Tensor& target, py::object weight, py::object size_average, py::object reduce,
         const std::string& reduction) {
        return binary_cross_entropy(input, target, optional_tensor_arg(weight, "binary_cross_entropy", "weight"),
                                    reduction_of(size_average, reduce, reduction, "binary_cross_entropy"));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = none, py::arg("size_average") = none,
      py::arg("reduce") = none, py::arg("reduction") = "mean");
  nn.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& input, const Tensor& target, py::object weight, py::object size_average, py::object reduce,
         const std::string& reduction, py::object pos_weight) {
        const char* op = "binary_cross_entropy_with_logits";
        return binary_cross_entropy_with_logits(input, target, optional_tensor_arg(weight, op, "weight"),
                                                reduction_of(size_average, reduce, reduction, op),
                                                optional_tensor_arg(pos_weight, op, "pos_weight"));
      },
      py::arg("input"), py::arg("target"), py::arg("weight") = none, py::arg("size_average") = none,
      py::arg("reduce") = none, py::arg("reduction") = "mean", py::arg("pos_weight") = none);
  nn.def(
      "kl_div",
      [](const Tensor& input, const Tensor& target, py::object size_average, py::object reduce,
         const std::string& reduction, bool log_target) {
        return kl_div(input, target, reduction_of(size_average, reduce, reduction, "kl_div"), log_target);
      },
      py::arg("input"), py::arg("target"), py::arg("size_average") = none, py::arg("reduce") = none,
      py::arg("reduction") = "mean", py::arg("log_target") = false);
}

}  // namespace ember::python
