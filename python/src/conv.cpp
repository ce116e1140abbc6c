// Bindings of the conv family into ember._C._nn (torch.nn.functional's names,
// argument names and defaults). Padding may be an int, a tuple or a string.
#include <ember/cuda/conv.h>

#include "bind.h"

namespace ember::python {

namespace {

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

template <class IntFn, class StrFn>
Tensor with_padding(const char* op, py::handle padding, IntFn int_fn, StrFn str_fn) {
  if (py::isinstance<py::str>(padding)) return str_fn(padding.cast<std::string>());
  return int_fn(to_int_list(padding, op));
}

}  // namespace

void init_conv(py::module_& m) {
  py::module_ nn = nn_module(m);
  nn.def("conv2d", [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, py::object stride,
                      py::object padding, py::object dilation, int64_t groups) {
    const auto s = to_int_list(stride, "conv2d"), d = to_int_list(dilation, "conv2d");
    return with_padding("conv2d", padding,
        [&](const IntList& p) { return conv2d(x, w, opt(b), s, p, d, groups); },
        [&](const std::string& p) { return conv2d(x, w, opt(b), s, p, d, groups); });
  }, py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
     py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
  nn.def("conv1d", [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, py::object stride,
                      py::object padding, py::object dilation, int64_t groups) {
    const auto s = to_int_list(stride, "conv1d"), d = to_int_list(dilation, "conv1d");
    return with_padding("conv1d", padding,
        [&](const IntList& p) { return conv1d(x, w, opt(b), s, p, d, groups); },
        [&](const std::string& p) { return conv1d(x, w, opt(b), s, p, d, groups); });
  }, py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
     py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
  nn.def("conv_transpose2d", [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, py::object stride,
                                py::object padding, py::object output_padding, int64_t groups, py::object dilation) {
    const char* op = "conv_transpose2d";
    return conv_transpose2d(x, w, opt(b), to_int_list(stride, op), to_int_list(padding, op),
                            to_int_list(output_padding, op), groups, to_int_list(dilation, op));
  }, py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
     py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("groups") = 1, py::arg("dilation") = 1);
  nn.def("conv_transpose1d", [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, py::object stride,
                                py::object padding, py::object output_padding, int64_t groups, py::object dilation) {
    const char* op = "conv_transpose1d";
    return conv_transpose1d(x, w, opt(b), to_int_list(stride, op), to_int_list(padding, op),
                            to_int_list(output_padding, op), groups, to_int_list(dilation, op));
  }, py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
     py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("groups") = 1, py::arg("dilation") = 1);
  // torch also exposes these at top level (torch.conv2d, ...).
  for (const char* name : {"conv2d", "conv1d", "conv_transpose2d", "conv_transpose1d"}) m.attr(name) = nn.attr(name);

  // The C++ state behind ember.backends.cudnn's flags (python/ember/backends/cudnn).
  m.def("_get_cudnn_flags", [] {
    const CudnnFlags f = cudnn_flags();
    py::dict d;
    d["enabled"] = f.enabled;
    d["benchmark"] = f.benchmark;
    d["deterministic"] = f.deterministic;
    d["allow_tf32"] = f.allow_tf32;
    return d;
  });
  m.def("_set_cudnn_flag", [](const std::string& name, bool value) {
    CudnnFlags f = cudnn_flags();
    if (name == "enabled") f.enabled = value;
    else if (name == "benchmark") f.benchmark = value;
    else if (name == "deterministic") f.deterministic = value;
    else if (name == "allow_tf32") f.allow_tf32 = value;
    else throw ValueError(str("ember.backends.cudnn: unknown flag '", name, "'"));
    set_cudnn_flags(f);
  }, py::arg("name"), py::arg("value"));
  m.def("_cudnn_conv_plan_count", &cuda::conv_plan_count, py::arg("index") = 0);
}

}  // namespace ember::python
