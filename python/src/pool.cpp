// Bindings of the pool family into ember._C._nn with torch.nn.functional's
// names, argument names and defaults.
#include "bind.h"

namespace ember::python {

namespace {

// stride=None (or an empty list) means stride = kernel_size.
IntList stride_arg(py::handle s, const char* op) {
  if (s.is_none()) return {};
  return to_int_list(s, op);
}

// output_size entries may be None: keep that input size.
IntList output_size_arg(py::handle size, const Tensor& x, int64_t spatial, const char* op) {
  if (!py::isinstance<py::tuple>(size) && !py::isinstance<py::list>(size)) return to_int_list(size, op);
  IntList out;
  const py::sequence seq = size.cast<py::sequence>();
  for (size_t i = 0; i < seq.size(); ++i) {
    py::object v = seq[i];
    const int64_t dim = x.dim() - static_cast<int64_t>(seq.size()) + static_cast<int64_t>(i);
    if (v.is_none()) {
      out.push_back(dim >= 0 ? x.size(dim) : 1);
      continue;
    }
    try {
      out.push_back(v.cast<int64_t>());
    } catch (const py::cast_error&) {
      throw TypeError(str(op, ": output_size must hold ints or None, but element ", i, " is ", type_name(v)));
    }
  }
  (void)spatial;
  return out;
}

py::object maybe_indices(const std::tuple<Tensor, Tensor>& r, bool return_indices) {
  if (return_indices) return py::make_tuple(std::get<0>(r), std::get<1>(r));
  return py::cast(std::get<0>(r));
}

}  // namespace

void init_pool(py::module_& m) {
  py::module_ nn = nn_module(m);
  nn.def("max_pool2d", [](const Tensor& x, py::object k, py::object s, py::object p, py::object d, bool ceil_mode,
                          bool return_indices) {
    const char* op = "max_pool2d";
    return maybe_indices(max_pool2d_with_indices(x, to_int_list(k, op), stride_arg(s, op), to_int_list(p, op),
                                                 to_int_list(d, op), ceil_mode), return_indices);
  }, py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
     py::arg("dilation") = 1, py::arg("ceil_mode") = false, py::arg("return_indices") = false);
  nn.def("max_pool2d_with_indices", [](const Tensor& x, py::object k, py::object s, py::object p, py::object d,
                                       bool ceil_mode, bool) {
    const char* op = "max_pool2d";
    return max_pool2d_with_indices(x, to_int_list(k, op), stride_arg(s, op), to_int_list(p, op), to_int_list(d, op),
                                   ceil_mode);
  }, py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
     py::arg("dilation") = 1, py::arg("ceil_mode") = false, py::arg("return_indices") = true);
  nn.def("max_pool1d", [](const Tensor& x, py::object k, py::object s, py::object p, py::object d, bool ceil_mode,
                          bool return_indices) {
    const char* op = "max_pool1d";
    return maybe_indices(max_pool1d_with_indices(x, to_int_list(k, op), stride_arg(s, op), to_int_list(p, op),
                                                 to_int_list(d, op), ceil_mode), return_indices);
  }, py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
     py::arg("dilation") = 1, py::arg("ceil_mode") = false, py::arg("return_indices") = false);
  nn.def("avg_pool2d", [](const Tensor& x, py::object k, py::object s, py::object p, bool ceil_mode,
                          bool count_include_pad, std::optional<int64_t> divisor_override) {
    const char* op = "avg_pool2d";
    return avg_pool2d(x, to_int_list(k, op), stride_arg(s, op), to_int_list(p, op), ceil_mode, count_include_pad,
                      divisor_override);
  }, py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
     py::arg("ceil_mode") = false, py::arg("count_include_pad") = true, py::arg("divisor_override") = py::none());
  nn.def("avg_pool1d", [](const Tensor& x, py::object k, py::object s, py::object p, bool ceil_mode,
                          bool count_include_pad) {
    const char* op = "avg_pool1d";
    return avg_pool1d(x, to_int_list(k, op), stride_arg(s, op), to_int_list(p, op), ceil_mode, count_include_pad);
  }, py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
     py::arg("ceil_mode") = false, py::arg("count_include_pad") = true);
  nn.def("adaptive_avg_pool2d", [](const Tensor& x, py::object size) {
    return adaptive_avg_pool2d(x, output_size_arg(size, x, 2, "adaptive_avg_pool2d"));
  }, py::arg("input"), py::arg("output_size"));
  nn.def("adaptive_avg_pool1d", [](const Tensor& x, py::object size) {
    return adaptive_avg_pool1d(x, output_size_arg(size, x, 1, "adaptive_avg_pool1d"));
  }, py::arg("input"), py::arg("output_size"));
  nn.def("adaptive_max_pool2d", [](const Tensor& x, py::object size, bool return_indices) {
    return maybe_indices(adaptive_max_pool2d(x, output_size_arg(size, x, 2, "adaptive_max_pool2d")), return_indices);
  }, py::arg("input"), py::arg("output_size"), py::arg("return_indices") = false);
  nn.def("adaptive_max_pool1d", [](const Tensor& x, py::object size, bool return_indices) {
    return maybe_indices(adaptive_max_pool1d(x, output_size_arg(size, x, 1, "adaptive_max_pool1d")), return_indices);
  }, py::arg("input"), py::arg("output_size"), py::arg("return_indices") = false);
  // torch also has these at top level.
  for (const char* name : {"max_pool2d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d"}) {
    m.attr(name) = nn.attr(name);
  }
}

}  // namespace ember::python
