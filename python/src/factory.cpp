// Creation functions: zeros, ones, full, empty, arange, linspace, eye, *_like.
#include "bind.h"
#include "default_device.h"

namespace ember::python {

namespace {
Tensor finish(Tensor t, bool requires_grad) {
  if (requires_grad) t.requires_grad_(true);
  return t;
}
}  // namespace

void init_factory(py::module_& m) {
  // The per-thread default device behind ember.set_default_device (python/ember/_default_device.py).
  m.def("_set_default_device", [](py::object device) {
    set_default_device(device.is_none() ? std::nullopt : std::optional<Device>(to_device(device)));
  }, py::arg("device"));
  m.def("_get_default_device", [] { return default_device(); });
  auto sized = [&m](const char* name, auto make) {
    m.def(name, [make, name](py::args args, py::object size, py::object dtype, py::object device, bool requires_grad) {
      EMBER_CHECK(size.is_none() != (args.size() == 0), TypeError, name,
                  size.is_none() ? ": missing the size argument" : ": size given both positionally and as a keyword");
      Shape shape = size.is_none() ? shape_from_args(args, name) : to_int_list(size, name);
      check_size_nonnegative(shape, name);
      return finish(make(shape, to_optional_dtype(dtype).value_or(default_float_dtype()), factory_device(device)),
                    requires_grad);
    }, py::kw_only(), py::arg("size") = py::none(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
       py::arg("requires_grad") = false);
  };
  sized("zeros", [](const Shape& s, DType d, Device dev) { return zeros(s, d, dev); });
  sized("ones", [](const Shape& s, DType d, Device dev) { return ones(s, d, dev); });
  sized("empty", [](const Shape& s, DType d, Device dev) { return empty(s, d, dev); });
  m.def("full", [](py::object size, py::object value, py::object dtype, py::object device, bool requires_grad) {
    if (is_complex_value(value)) {
      const DType dt = to_optional_dtype(dtype).value_or(complex_dtype_for(default_float_dtype()));
      Tensor out = empty(to_int_list(size, "full"), dt, factory_device(device));
      return finish(out.copy_(complex_fill_value(value, dt, "full")), requires_grad);
    }
    const Scalar v = to_scalar(value, "full");
    return finish(full(to_int_list(size, "full"), v, to_optional_dtype(dtype), factory_device(device)), requires_grad);
  }, py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
     py::arg("device") = py::none(), py::arg("requires_grad") = false);

  // layout (strided only), memory_format (ember keeps the default layout) and pin_memory are
  // accepted as torch's *_like take them: optimizers write zeros_like(p, memory_format=preserve_format).
  auto like = [&m](const char* name, auto make) {
    m.def(name, [make](const Tensor& t, py::object dtype, py::object layout, py::object device, bool requires_grad,
                       py::object memory_format, bool pin_memory) {
      Tensor out = make(t, to_optional_dtype(dtype));
      if (!device.is_none()) out = out.to(to_device(device));
      return finish(out, requires_grad);
    }, py::arg("input"), py::kw_only(), py::arg("dtype") = py::none(), py::arg("layout") = py::none(),
       py::arg("device") = py::none(), py::arg("requires_grad") = false, py::arg("memory_format") = py::none(),
       py::arg("pin_memory") = false);
  };
  like("zeros_like", [](const Tensor& t, std::optional<DType> d) { return zeros_like(t, d); });
  like("ones_like", [](const Tensor& t, std::optional<DType> d) { return ones_like(t, d); });
  like("empty_like", [](const Tensor& t, std::optional<DType> d) { return empty_like(t, d); });
  m.def("full_like", [](const Tensor& t, py::object value, py::object dtype, py::object layout, py::object device,
                        bool requires_grad, py::object memory_format, bool pin_memory) {
    if (is_complex_value(value)) {
      Tensor out = empty_like(t, to_optional_dtype(dtype));
      out.copy_(complex_fill_value(value, out.dtype(), "full_like"));
      if (!device.is_none()) out = out.to(to_device(device));
      return finish(out, requires_grad);
    }
    Tensor out = full_like(t, to_scalar(value, "full_like"), to_optional_dtype(dtype));
    if (!device.is_none()) out = out.to(to_device(device));
    return finish(out, requires_grad);
  }, py::arg("input"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
     py::arg("layout") = py::none(), py::arg("device") = py::none(), py::arg("requires_grad") = false,
     py::arg("memory_format") = py::none(), py::arg("pin_memory") = false);

  m.def("arange", [](py::object a, py::object b, py::object step, py::object dtype, py::object device,
                     bool requires_grad) {
    // arange(end), arange(start, end[, step]) or keywords, start defaulting to 0.
    EMBER_CHECK(!(a.is_none() && b.is_none()), TypeError, "arange: missing the 'end' argument");
    Scalar start = 0, end;
    if (b.is_none()) {
      end = to_scalar(a, "arange");
    } else if (a.is_none()) {
      end = to_scalar(b, "arange");
    } else {
      start = to_scalar(a, "arange");
      end = to_scalar(b, "arange");
    }
    return finish(arange(start, end, to_scalar(step, "arange"), to_optional_dtype(dtype), factory_device(device)),
                  requires_grad);
  }, py::arg("start") = py::none(), py::arg("end") = py::none(), py::arg("step") = 1, py::kw_only(),
     py::arg("dtype") = py::none(),
     py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def("linspace", [](py::object start, py::object end, int64_t steps, py::object dtype, py::object device,
                       bool requires_grad) {
    return finish(linspace(to_scalar(start, "linspace").to_double(), to_scalar(end, "linspace").to_double(), steps,
                           to_optional_dtype(dtype), factory_device(device)),
                  requires_grad);
  }, py::arg("start"), py::arg("end"), py::arg("steps"), py::kw_only(), py::arg("dtype") = py::none(),
     py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def("eye", [](int64_t n, std::optional<int64_t> mcols, py::object dtype, py::object device, bool requires_grad) {
    return finish(eye(n, mcols, to_optional_dtype(dtype).value_or(default_float_dtype()), factory_device(device)),
                  requires_grad);
  }, py::arg("n"), py::arg("m") = py::none(), py::kw_only(), py::arg("dtype") = py::none(),
     py::arg("device") = py::none(), py::arg("requires_grad") = false);
}

}  // namespace ember::python
