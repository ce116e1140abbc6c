// The Tensor class: structure, conversion to and from Python and numpy.
#include <pybind11/numpy.h>

#include "bind.h"
#include "default_device.h"

namespace ember::python {

namespace {
TensorClass* g_tensor_class = nullptr;

// The dim of size(dim) / stride(dim): an int (a one-element integer tensor too).
int64_t dim_arg(py::handle dim, const char* op) { return cast_arg<int64_t>(dim, op, "dim", "an int or None"); }

// A complex element as a Python complex.
py::object complex_at(const Tensor& t, const char* base, int64_t offset) {
  if (t.dtype() == DType::Complex64) {
    const float* p = reinterpret_cast<const float*>(base) + 2 * offset;
    return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(p[0], p[1]));
  }
  const double* p = reinterpret_cast<const double*>(base) + 2 * offset;
  return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(p[0], p[1]));
}

py::object to_list(const Tensor& t, int64_t dim, const char* base, int64_t offset) {
  if (dim == t.dim() && is_complex(t.dtype())) return complex_at(t, base, offset);
  if (dim == t.dim()) {
    return dispatch(t.dtype(), "tolist", [&](auto tag) -> py::object {
      using T = typename decltype(tag)::type;
      const T v = reinterpret_cast<const T*>(base)[offset];
      if constexpr (std::is_same_v<T, bool>) return py::bool_(v);
      else if constexpr (std::is_integral_v<T>) return py::int_(static_cast<int64_t>(v));
      else if constexpr (std::is_same_v<T, double>) return py::float_(v);
      else return py::float_(static_cast<double>(static_cast<float>(v)));
    });
  }
  py::list out;
  for (int64_t i = 0; i < t.shape()[dim]; ++i) out.append(to_list(t, dim + 1, base, offset + i * t.strides()[dim]));
  return std::move(out);
}

py::dtype numpy_dtype(DType t) {
  EMBER_CHECK(t != DType::BFloat16, TypeError, "numpy: Got unsupported ScalarType BFloat16 (numpy has no bfloat16); "
              "convert with .float() first");
  return py::dtype(dtype_name(t));
}

Tensor from_numpy(py::array arr) {
  const std::string name = py::str(arr.dtype().attr("name"));
  DType dt = DType::Float32;
  try {
    dt = to_dtype(arr.dtype());
  } catch (const TypeError&) {
    throw TypeError(str("from_numpy: can't convert np.ndarray of type numpy.", name, ". The only supported types "
                        "are: complex128, complex64, float64, float32, float16, int64, int32, int8, uint8, and bool."));
  }
  EMBER_CHECK(arr.dtype().attr("byteorder").cast<std::string>() != ">", ValueError,
              "from_numpy: the array's byte order (big-endian) is not the machine's; convert it first with "
              "array.astype(array.dtype.newbyteorder('='))");
  const int64_t item = static_cast<int64_t>(itemsize(dt));
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  Strides strides(arr.ndim());
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
    EMBER_CHECK(arr.strides()[i] % item == 0 && arr.strides()[i] >= 0, ValueError,
                "from_numpy: array strides must be non-negative multiples of the element size (got ",
                arr.strides()[i], " bytes); pass a copy made with numpy.ascontiguousarray");
    strides[i] = arr.strides()[i] / item;
  }
  if (!arr.writeable()) {
    // torch shares it and warns that writing is undefined (a read-only mapping would fault): a copy.
    if (PyErr_WarnEx(PyExc_UserWarning, "from_numpy: the array is not writable, so the tensor holds a copy of it "
                                        "instead of sharing its memory", 1) != 0) {
      throw py::error_already_set();
    }
    return from_numpy(py::array(py::module_::import("numpy").attr("array")(arr)));
  }
  // The tensor keeps the array alive; releasing it needs the GIL.
  auto* keep = new py::object(arr);
  std::shared_ptr<void> owner(keep, [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
  int64_t extent = 1;
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) extent += (shape[i] - 1) * strides[i];
  Storage storage(arr.mutable_data(), static_cast<size_t>(std::max<int64_t>(extent, 0) * item), kCPU, owner);
  return Tensor(std::make_shared<TensorImpl>(storage, shape, strides, 0, dt));
}

// int(t) / float(t): torch raises ValueError for more than one element (item() a RuntimeError).
Scalar python_scalar(const Tensor& t, const char* as) {
  EMBER_CHECK(t.numel() == 1, ValueError, "only one element tensors can be converted to Python scalars (", as,
              "() of a tensor of shape ", shape_str(t.shape()), ")");
  return t.item();
}

py::array to_numpy(const Tensor& t) {
  EMBER_CHECK(!t.requires_grad(), Error,
              "numpy: can't call numpy() on a Tensor that requires grad. Use tensor.detach().numpy() instead.");
  EMBER_CHECK(t.device().is_cpu(), TypeError, "numpy: can't convert a ", t.device().str(),
              " tensor to numpy. Use tensor.cpu() to copy the tensor to host memory first.");
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  std::vector<py::ssize_t> strides;
  for (auto s : t.strides()) {
    // A dim of one element may carry any stride (x[::2**63 - 1]); in bytes it
    // could overflow, and numpy never uses it: 0 then.
    py::ssize_t bytes;
    if (__builtin_mul_overflow(static_cast<py::ssize_t>(s), static_cast<py::ssize_t>(t.element_size()), &bytes)) bytes = 0;
    strides.push_back(bytes);
  }
  // The capsule holds a handle so the memory outlives the tensor object.
  auto* keep = new Tensor(t);
  py::capsule base(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(numpy_dtype(t.dtype()), shape, strides, t.data_ptr(), base);
}

}  // namespace

TensorClass& tensor_class() { return *g_tensor_class; }

void init_tensor(py::module_& m) {
  // Leaked on purpose: the class object must outlive interpreter shutdown.
  g_tensor_class = new TensorClass(m, "Tensor", py::dynamic_attr());
  auto& cls = *g_tensor_class;
  cls.def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def("size", [](const Tensor& t, py::object dim) -> py::object {
        if (dim.is_none()) return py::tuple(py::cast(t.shape()));
        return py::int_(t.size(dim_arg(dim, "size")));
      }, py::arg("dim") = py::none())
      .def("dim", &Tensor::dim)
      .def_property_readonly("ndim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("stride", [](const Tensor& t, py::object dim) -> py::object {
        if (dim.is_none()) return py::tuple(py::cast(t.strides()));
        return py::int_(t.stride(dim_arg(dim, "stride")));
      }, py::arg("dim") = py::none())
      .def("storage_offset", &Tensor::storage_offset)
      .def("element_size", &Tensor::element_size)
      .def_property_readonly("itemsize", &Tensor::element_size)
      .def_property_readonly("nbytes", [](const Tensor& t) { return t.numel() * t.element_size(); })
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("is_cuda", [](const Tensor& t) { return t.device().is_cuda(); })
      .def_property_readonly("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("is_floating_point", &Tensor::is_floating_point)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()); })
      .def("item", [](const Tensor& t) -> py::object {
        if (is_complex(t.dtype())) {
          EMBER_CHECK(t.numel() == 1, Error, "item: a Tensor with ", t.numel(),
                      " elements cannot be converted to Scalar (shape ", shape_str(t.shape()), ")");
          const Tensor c = t.device().is_cpu() ? t : t.cpu();
          return complex_at(c, static_cast<const char*>(c.storage().data()), c.storage_offset());
        }
        const Scalar s = t.item();
        if (s.is_bool()) return py::bool_(s.to_bool());
        if (s.is_integral()) return py::int_(s.to_int());
        return py::float_(s.to_double());
      })
      .def("tolist", [](const Tensor& t) {
        Tensor c = t.device().is_cpu() ? t : t.cpu();
        return to_list(c, 0, static_cast<const char*>(c.data_ptr()), 0);
      })
      .def("numpy", [](const Tensor& t, bool force) {
        // force: torch's way to say "whatever it takes": off the graph and onto the host first.
        return to_numpy(force ? t.detach().cpu() : t);
      }, py::kw_only(), py::arg("force") = false)
      .def("__array__", [](const Tensor& t, py::object dtype, py::object copy) {
        py::array a = to_numpy(t);  // refuses tensors that require grad, as torch
        return dtype.is_none() ? a : py::array(a.attr("astype")(dtype));
      }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("__len__", [](const Tensor& t) {
        EMBER_CHECK(t.dim() > 0, TypeError, "len() of a 0-d tensor");
        return t.shape()[0];
      })
      .def("__bool__", [](const Tensor& t) {
        EMBER_CHECK(t.numel() != 0, Error, "Boolean value of Tensor with no values is ambiguous");
        EMBER_CHECK(t.numel() == 1, Error, "Boolean value of Tensor with more than one value is ambiguous (shape ",
                    shape_str(t.shape()), "); use .any() or .all()");
        return t.item().to_bool();
      })
      .def("__float__", [](const Tensor& t) { return python_scalar(t, "float").to_double(); })
      .def("__complex__", [](const Tensor& t) {
        if (!is_complex(t.dtype())) return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(t.item().to_double(), 0.0));
        return py::module_::import("builtins").attr("complex")(py::cast(t).attr("item")());
      })
      .def("__int__", [](const Tensor& t) { return python_scalar(t, "int").to_int(); })
      .def("__index__", [](const Tensor& t) {
        EMBER_CHECK(t.numel() == 1 && !t.is_floating_point(), TypeError,
                    "only integer tensors of a single element can be converted to an index");
        return t.item().to_int();
      })
      .def("__repr__", &Tensor::str)
      .def("__hash__", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()); })
      .def("__copy__", [](const Tensor& t) { return t; })
      // numpy defers to Tensor's reflected operators: np.float64(2) * x stays a tensor.
      .def_property_readonly_static("__array_priority__", [](py::object) { return 1000; })
      .def_property_readonly("_version", &Tensor::version);

  m.def("tensor", [](py::object data, py::object dtype, py::object device, bool requires_grad) {
    Tensor t = tensor_from_data(data, to_optional_dtype(dtype), factory_device(device));
    if (requires_grad) t.requires_grad_(true);
    return t;
  }, py::arg("data"), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
     py::arg("requires_grad") = false);
  m.def("as_tensor", [](py::object data, py::object dtype, py::object device) {
    if (py::isinstance<Tensor>(data)) {
      Tensor t = data.cast<Tensor>();
      // As torch: a default device set with set_default_device moves the tensor there.
      const Device dev = device.is_none() ? default_device().value_or(t.device()) : to_device(device);
      return t.to(dev, to_optional_dtype(dtype).value_or(t.dtype()));
    }
    const Device dev = factory_device(device);
    if (py::isinstance<py::array>(data) && dtype.is_none() && device.is_none() && dev.is_cpu()) {
      return from_numpy(py::array::ensure(data));
    }
    return tensor_from_data(data, to_optional_dtype(dtype), dev);
  }, py::arg("data"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def("from_numpy", [](py::object obj) {
    EMBER_CHECK(py::isinstance<py::array>(obj), TypeError, "from_numpy: expected np.ndarray (got ",
                type_name(obj), ")");
    return from_numpy(py::reinterpret_borrow<py::array>(obj));
  });
  m.def("is_tensor", [](py::object obj) { return py::isinstance<Tensor>(obj); });
}

}  // namespace ember::python
