// Shape ops and views.
#include <ember/core/ops/diagonal.h>
#include <ember/core/ops/view_dtype.h>
#include <ember/core/ops/windows.h>

#include "bind.h"
#include "default_device.h"

namespace ember::python {

namespace {

std::vector<Tensor> split_any(const Tensor& t, py::handle sizes, int64_t dim) {
  if (py::isinstance<py::int_>(sizes)) return t.split(sizes.cast<int64_t>(), dim);
  return t.split(to_int_list(sizes, "split"), dim);
}

py::tuple as_tuple(const std::vector<Tensor>& ts) { return py::cast(ts); }

// squeeze(), squeeze(dim) or squeeze((d0, d1, ...)): the listed dims of size 1 go, the others stay.
Tensor squeeze_dims(const Tensor& t, py::handle dim) {
  if (dim.is_none()) return t.squeeze();
  if (!py::isinstance<py::sequence>(dim)) {
    return t.squeeze(cast_arg<int64_t>(dim, "squeeze", "dim", "an int or a tuple of ints"));
  }
  const std::vector<int64_t> dims = to_int_list(dim, "squeeze");
  if (dims.empty()) return t;  // dim_mask reads no dims as all of them
  const std::vector<bool> listed = dim_mask(dims, t.dim(), "squeeze");  // wraps, refuses repeats
  Tensor out = t;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {  // last first: the others keep their place
    if (listed[d]) out = out.squeeze(d);
  }
  return out;
}

std::vector<Tensor> tensor_list(py::handle seq, const char* op) {
  EMBER_CHECK(py::isinstance<py::sequence>(seq) && !py::isinstance<Tensor>(seq), TypeError, op,
              ": expected a sequence of Tensors, got ", type_name(seq));
  std::vector<Tensor> out;
  for (py::handle h : seq) {
    EMBER_CHECK(py::isinstance<Tensor>(h), TypeError, op, ": expected a sequence of Tensors, but element ",
                out.size(), " is ", type_name(h));
    out.push_back(h.cast<Tensor>());
  }
  return out;
}

Tensor roll_any(const Tensor& t, py::handle shifts, py::handle dims) {
  return roll(t, to_int_list(shifts, "roll"), dims.is_none() ? Dims{} : to_int_list(dims, "roll"));
}

}  // namespace

void init_shape(py::module_& m) {
  auto& cls = tensor_class();
  cls.def("view", [](const Tensor& t, py::args args, py::kwargs kwargs) {
        if (kwargs.contains("dtype")) {
          EMBER_CHECK(args.empty() && kwargs.size() == 1, TypeError, "view: takes either a shape or dtype=, not both");
          return view_dtype(t, to_dtype(kwargs["dtype"]));
        }
        EMBER_CHECK(kwargs.empty(), TypeError, "view: unexpected keyword argument '",
                    py::str(kwargs.begin()->first).cast<std::string>(), "'");
        if (args.size() == 1 && py::isinstance<PyDType>(args[0])) return view_dtype(t, args[0].cast<PyDType>().value);
        return t.view(shape_from_args(args, "view"));
      })
      .def("reshape", [](const Tensor& t, py::args args) { return t.reshape(shape_from_args(args, "reshape")); })
      .def("expand", [](const Tensor& t, py::args args) { return t.expand(shape_from_args(args, "expand")); })
      .def("permute", [](const Tensor& t, py::args args) { return t.permute(shape_from_args(args, "permute")); })
      .def("view_as", &Tensor::view_as, py::arg("other"))
      .def("reshape_as", &Tensor::reshape_as, py::arg("other"))
      .def("expand_as", &Tensor::expand_as, py::arg("other"))
      .def("transpose", &Tensor::transpose, py::arg("dim0"), py::arg("dim1"))
      .def("swapaxes", &Tensor::transpose, py::arg("axis0"), py::arg("axis1"))
      .def("t", &Tensor::t)
      .def_property_readonly("T", [](const Tensor& t) {
        Dims d(t.dim());
        for (int64_t i = 0; i < t.dim(); ++i) d[i] = t.dim() - 1 - i;
        return t.permute(d);
      })
      .def_property_readonly("mT", [](const Tensor& t) { return t.transpose(-2, -1); })
      .def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"))
      .def("squeeze", &squeeze_dims, py::arg("dim") = py::none())
      .def("flatten", &Tensor::flatten, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      .def("unflatten", [](const Tensor& t, int64_t dim, py::handle sizes) {
        return t.unflatten(dim, to_int_list(sizes, "unflatten"));
      }, py::arg("dim"), py::arg("sizes"))
      .def("narrow", &Tensor::narrow, py::arg("dim"), py::arg("start"), py::arg("length"))
      .def("select", &Tensor::select, py::arg("dim"), py::arg("index"))
      .def("slice_scatter", &ember::slice_scatter, py::arg("src"), py::arg("dim") = 0, py::arg("start") = py::none(),
           py::arg("end") = py::none(), py::arg("step") = 1)
      .def("select_scatter", &ember::select_scatter, py::arg("src"), py::arg("dim"), py::arg("index"))
      .def("split", [](const Tensor& t, py::handle s, int64_t dim) { return as_tuple(split_any(t, s, dim)); },
           py::arg("split_size"), py::arg("dim") = 0)
      .def("chunk", [](const Tensor& t, int64_t c, int64_t dim) { return as_tuple(t.chunk(c, dim)); },
           py::arg("chunks"), py::arg("dim") = 0)
      .def("unbind", [](const Tensor& t, int64_t dim) { return as_tuple(t.unbind(dim)); }, py::arg("dim") = 0)
      .def("flip", [](const Tensor& t, py::args dims) { return t.flip(shape_from_args(dims, "flip")); })
      .def("roll", &roll_any, py::arg("shifts"), py::arg("dims") = py::none())
      .def("repeat", [](const Tensor& t, py::args r) { return t.repeat(shape_from_args(r, "repeat")); })
      .def("tril", &Tensor::tril, py::arg("diagonal") = 0)
      .def("triu", &Tensor::triu, py::arg("diagonal") = 0);
  m.def("reshape", [](const Tensor& t, py::object shape) { return t.reshape(to_int_list(shape, "reshape")); },
        py::arg("input"), py::arg("shape"));
  m.def("permute", [](const Tensor& t, py::object dims) { return t.permute(to_int_list(dims, "permute")); },
        py::arg("input"), py::arg("dims"));
  m.def("transpose", &ember::transpose, py::arg("input"), py::arg("dim0"), py::arg("dim1"));
  m.def("swapaxes", &ember::transpose, py::arg("input"), py::arg("axis0"), py::arg("axis1"));
  m.def("t", [](const Tensor& t) { return t.t(); }, py::arg("input"));
  m.def("unsqueeze", &ember::unsqueeze, py::arg("input"), py::arg("dim"));
  m.def("squeeze", &squeeze_dims, py::arg("input"), py::arg("dim") = py::none());
  m.def("flatten", [](const Tensor& t, int64_t s, int64_t e) { return t.flatten(s, e); }, py::arg("input"),
        py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  m.def("unflatten", [](const Tensor& t, int64_t dim, py::handle sizes) {
    return t.unflatten(dim, to_int_list(sizes, "unflatten"));
  }, py::arg("input"), py::arg("dim"), py::arg("sizes"));
  m.def("narrow", &ember::narrow, py::arg("input"), py::arg("dim"), py::arg("start"), py::arg("length"));
  m.def("select", &ember::select, py::arg("input"), py::arg("dim"), py::arg("index"));
  m.def("slice_scatter", &ember::slice_scatter, py::arg("input"), py::arg("src"), py::arg("dim") = 0,
        py::arg("start") = py::none(), py::arg("end") = py::none(), py::arg("step") = 1);
  m.def("select_scatter", &ember::select_scatter, py::arg("input"), py::arg("src"), py::arg("dim"),
        py::arg("index"));
  m.def("split", [](const Tensor& t, py::handle s, int64_t dim) { return as_tuple(split_any(t, s, dim)); },
        py::arg("tensor"), py::arg("split_size_or_sections"), py::arg("dim") = 0);
  m.def("chunk", [](const Tensor& t, int64_t c, int64_t dim) { return as_tuple(chunk(t, c, dim)); },
        py::arg("input"), py::arg("chunks"), py::arg("dim") = 0);
  m.def("unbind", [](const Tensor& t, int64_t dim) { return as_tuple(unbind(t, dim)); }, py::arg("input"),
        py::arg("dim") = 0);
  for (const char* name : {"cat", "concat", "concatenate"}) {
    m.def(name, [name](py::handle ts, int64_t dim) { return cat(tensor_list(ts, name), dim); }, py::arg("tensors"),
          py::arg("dim") = 0);
  }
  m.def("stack", [](py::handle ts, int64_t dim) { return stack(tensor_list(ts, "stack"), dim); },
        py::arg("tensors"), py::arg("dim") = 0);
  m.def("flip", [](const Tensor& t, py::handle dims) { return flip(t, to_int_list(dims, "flip")); },
        py::arg("input"), py::arg("dims"));
  m.def("roll", &roll_any, py::arg("input"), py::arg("shifts"), py::arg("dims") = py::none());
  m.def("diagonal", &ember::diagonal, py::arg("input"), py::arg("offset") = 0, py::arg("dim1") = 0,
        py::arg("dim2") = 1);
  m.def("diag_embed", &ember::diag_embed, py::arg("input"), py::arg("offset") = 0, py::arg("dim1") = -2,
        py::arg("dim2") = -1);
  m.def("diag", &ember::diag, py::arg("input"), py::arg("diagonal") = 0);
  m.def("trace", &ember::trace, py::arg("input"));
  cls.def("diagonal", &ember::diagonal, py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1)
      .def("diag_embed", &ember::diag_embed, py::arg("offset") = 0, py::arg("dim1") = -2, py::arg("dim2") = -1)
      .def("diag", &ember::diag, py::arg("diagonal") = 0)
      .def("trace", &ember::trace)
      .def("unfold", &ember::unfold, py::arg("dimension"), py::arg("size"), py::arg("step"));
  auto triangle = [&m](const char* name, Tensor (*fn)(int64_t, int64_t, int64_t, DType, Device)) {
    m.def(name, [fn](int64_t row, int64_t col, int64_t offset, py::object dtype, py::object device, py::object) {
      return fn(row, col, offset, to_optional_dtype(dtype).value_or(DType::Int64), factory_device(device));
    }, py::arg("row"), py::arg("col"), py::arg("offset") = 0, py::kw_only(), py::arg("dtype") = py::none(),
       py::arg("device") = py::none(), py::arg("layout") = py::none());
  };
  triangle("tril_indices", &ember::tril_indices);
  triangle("triu_indices", &ember::triu_indices);
  m.def("tril", &ember::tril, py::arg("input"), py::arg("diagonal") = 0);
  m.def("triu", &ember::triu, py::arg("input"), py::arg("diagonal") = 0);
}

}  // namespace ember::python
