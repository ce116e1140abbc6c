// Copies and conversions: to(), clone, contiguous, copy_, fill_, dtype casts.
#include "bind.h"

namespace ember::python {

void init_copy(py::module_& m) {
  auto& cls = tensor_class();
  cls.def("to", [](const Tensor& t, py::args args, py::kwargs kwargs) {
    std::optional<DType> dtype;
    std::optional<Device> device;
    bool copy = false, non_blocking = false;
    int flags = 0;  // positional bools: non_blocking, then copy (PyTorch's order)
    auto take = [&](py::handle a) {
      if (py::isinstance<py::bool_>(a)) {
        EMBER_CHECK(flags < 2, TypeError, "to() takes at most two bool arguments (non_blocking, copy)");
        (flags++ == 0 ? non_blocking : copy) = a.cast<bool>();
      } else if (py::isinstance<Tensor>(a)) {
        Tensor o = a.cast<Tensor>();
        dtype = o.dtype();
        device = o.device();
      } else if (py::isinstance<PyDType>(a)) {
        dtype = to_dtype(a);
      } else if (!a.is_none()) {
        device = to_device(a);
      }
    };
    for (auto a : args) take(a);
    for (auto [k, v] : kwargs) {
      const std::string key = py::str(k);
      if (key == "dtype") dtype = to_optional_dtype(v);
      else if (key == "device") { if (!v.is_none()) device = to_device(v); }
      else if (key == "copy") copy = cast_arg<bool>(v, "to", "copy", "a bool");
      else if (key == "non_blocking") non_blocking = cast_arg<bool>(v, "to", "non_blocking", "a bool");
      else if (key == "memory_format") continue;
      else throw TypeError(str("to() got an unexpected keyword argument '", key, "'"));
    }
    return t.to(device.value_or(t.device()), dtype.value_or(t.dtype()), non_blocking, copy);
  });
  cls.def("type_as", &Tensor::type_as, py::arg("other"))
      .def("clone", [](const Tensor& t, py::object) { return t.clone(); }, py::arg("memory_format") = py::none())
      .def("contiguous", [](const Tensor& t, py::object) { return t.contiguous(); }, py::arg("memory_format") = py::none())
      .def("copy_", [](Tensor& t, py::object src, bool non_blocking) -> Tensor& {  // by reference: the same object
        return t.copy_(to_tensor_arg(src, "copy_"), non_blocking);
      }, py::arg("src"), py::arg("non_blocking") = false)
      .def("pin_memory", [](const Tensor& t, py::object) { return t.pin_memory(); }, py::arg("device") = py::none())
      .def("is_pinned", [](const Tensor& t, py::object) { return t.is_pinned(); }, py::arg("device") = py::none())
      .def("fill_", [](Tensor& t, py::object v) -> Tensor& {
        if (py::isinstance<Tensor>(v)) {
          const Tensor value = v.cast<Tensor>();
          EMBER_CHECK(value.dim() == 0, Error, "fill_: only supports a 0-dimension value tensor, but got a tensor with ",
                      value.dim(), " dimensions");
        }
        if (is_complex_value(v)) return t.copy_(complex_fill_value(v, t.dtype(), "fill_"));
        return t.fill_(to_scalar(v, "fill_"));
      }, py::arg("value"))
      .def("zero_", &Tensor::zero_)
      .def("cpu", &Tensor::cpu)
      .def("cuda", [](const Tensor& t, py::object device, bool non_blocking) {
        return t.to(device.is_none() ? Device(DeviceType::CUDA, 0) : to_device(device), t.dtype(), non_blocking);
      }, py::arg("device") = py::none(), py::arg("non_blocking") = false)
      .def("float", &Tensor::float_)
      .def("double", &Tensor::double_)
      .def("half", &Tensor::half)
      .def("bfloat16", &Tensor::bfloat16)
      .def("long", &Tensor::long_)
      .def("int", &Tensor::int_)
      .def("bool", &Tensor::bool_)
      .def("byte", [](const Tensor& t) { return t.to(DType::UInt8); })
      .def("char", [](const Tensor& t) { return t.to(DType::Int8); })
      .def("cfloat", [](const Tensor& t) { return t.to(DType::Complex64); })
      .def("cdouble", [](const Tensor& t) { return t.to(DType::Complex128); })
      // ember's tensors are all dense and strided: to_dense() is the tensor itself, as torch's of a strided one.
      .def("to_dense", [](const Tensor& t, py::object dtype, py::object masked_grad) {
        return dtype.is_none() ? t : t.to(to_dtype(dtype));
      }, py::arg("dtype") = py::none(), py::kw_only(), py::arg("masked_grad") = py::none())
      .def("type", [](const Tensor& t, py::object dtype) -> py::object {
        if (dtype.is_none()) return py::str(std::string("ember.") + dtype_name(t.dtype()));
        return py::cast(t.to(to_dtype(dtype)));
      }, py::arg("dtype") = py::none());
  m.def("clone", [](const Tensor& t, py::object) { return t.clone(); }, py::arg("input"), py::kw_only(),
        py::arg("memory_format") = py::none());
}

}  // namespace ember::python
