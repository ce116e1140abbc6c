// Conversions between Python objects and ember types, shared by all bindings.
#include <pybind11/numpy.h>

#include <cstdint>

#include <ember/core/scalar_fits.h>
#include <ember/core/type_promotion.h>

#include "bind.h"

namespace ember::python {

namespace {
// Leaked on purpose: they must outlive interpreter shutdown.
py::object* const g_dtypes = new py::object[kNumDTypes];
}

py::object dtype_object(DType t) { return g_dtypes[static_cast<int>(t)]; }

DType to_dtype(py::handle obj) {
  if (py::isinstance<PyDType>(obj)) return obj.cast<PyDType>().value;
  if (obj.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return default_float_dtype();
  if (obj.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::Int64;
  if (obj.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
  // numpy dtypes and scalar types, by name
  if (py::hasattr(obj, "dtype") || py::hasattr(obj, "kind")) {
    try {
      std::string name = py::str(py::module_::import("numpy").attr("dtype")(obj).attr("name"));
      for (int i = 0; i < kNumDTypes; ++i) {
        if (name == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
      }
    } catch (const py::error_already_set&) {
    }
  }
  throw TypeError(str("expected an ember dtype such as ember.float32, got ", std::string(py::repr(obj))));
}

std::optional<DType> to_optional_dtype(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  return to_dtype(obj);
}

namespace {
// A Python int as int64, or an error naming the op when it does not fit.
int64_t to_int64(py::handle obj, const char* op) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
  if (overflow != 0) {
    throw Error(str(op, ": value ", std::string(py::str(obj)), " is out of range for int64"));
  }
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

// cuda:i for a bare index, as torch.device(1) and device=1 mean.
Device cuda_device_at(int64_t i) {
  EMBER_CHECK(i >= 0 && i <= INT32_MAX, ValueError, "device: the index must be a non-negative int32, got ", i);
  return Device(DeviceType::CUDA, static_cast<int>(i));
}
}  // namespace

Device to_device(py::handle obj, Device dflt) {
  if (obj.is_none()) return dflt;
  if (py::isinstance<Device>(obj)) return obj.cast<Device>();
  if (py::isinstance<py::str>(obj)) return Device(obj.cast<std::string>());
  // A bare int is a CUDA index, as in PyTorch; a bool is not an index.
  if (py::isinstance<py::int_>(obj) && !py::isinstance<py::bool_>(obj)) return cuda_device_at(to_int64(obj, "device"));
  throw TypeError(str("expected a device such as 'cpu' or 'cuda:0', got ", std::string(py::repr(obj))));
}

Scalar to_scalar(py::handle obj, const char* op) {
  EMBER_CHECK(!PyComplex_Check(obj.ptr()), TypeError, op,
              ": a complex number is not accepted here; pass a complex tensor (ember.tensor(", 
              std::string(py::repr(obj)), ")) instead");
  if (py::isinstance<py::bool_>(obj)) return Scalar(obj.cast<bool>());
  if (py::isinstance<py::int_>(obj)) return Scalar(to_int64(obj, op));
  if (py::isinstance<py::float_>(obj)) return Scalar(obj.cast<double>());
  if (py::isinstance<Tensor>(obj)) {
    const Tensor t = obj.cast<Tensor>();
    EMBER_CHECK(t.numel() == 1, TypeError, op, ": expected a number, got a tensor of shape ", t.shape_str());
    return t.item();
  }
  // numpy scalars and other numbers
  if (PyIndex_Check(obj.ptr())) return Scalar(obj.cast<int64_t>());
  if (PyNumber_Check(obj.ptr()) && py::hasattr(obj, "__float__")) return Scalar(py::reinterpret_borrow<py::object>(obj).attr("__float__")().cast<double>());
  throw TypeError(str(op, ": expected a number, got ", type_name(obj)));
}

namespace {
// Python complex numbers, and numpy's complex scalars.
bool is_complex_number(py::handle obj) {
  if (PyComplex_Check(obj.ptr())) return true;
  if (!py::hasattr(obj, "dtype") || py::isinstance<py::array>(obj) || py::isinstance<Tensor>(obj)) return false;
  py::object kind = obj.attr("dtype").attr("kind");
  return py::isinstance<py::str>(kind) && kind.cast<std::string>() == "c";
}

// A complex number as a 0-d complex128 tensor that promotes like a scalar.
Tensor complex_number_tensor(py::handle obj) {
  const Py_complex c = PyComplex_AsCComplex(obj.ptr());
  if (PyErr_Occurred()) throw py::error_already_set();
  Tensor t = empty({}, DType::Complex128);
  double* parts = static_cast<double*>(t.data_ptr());
  parts[0] = c.real;
  parts[1] = c.imag;
  t.impl()->wrapped_number = true;
  return t;
}
}  // namespace

bool is_complex_value(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) return is_complex(obj.cast<Tensor>().dtype());
  if (py::isinstance<py::bool_>(obj) || py::isinstance<py::int_>(obj) || py::isinstance<py::float_>(obj)) return false;
  return is_complex_number(obj);
}

Tensor complex_fill_value(py::handle obj, DType target, const char* op) {
  EMBER_CHECK(is_complex(target), TypeError, op, ": a complex value cannot fill a ", dtype_name(target),
              " tensor; make the tensor complex (dtype=ember.complex64) or pass a real value");
  return py::isinstance<Tensor>(obj) ? obj.cast<Tensor>() : complex_number_tensor(obj);
}

Tensor to_tensor_arg(py::handle obj, const char* op) {
  if (py::isinstance<Tensor>(obj)) return obj.cast<Tensor>();
  if (py::isinstance<py::bool_>(obj) || py::isinstance<py::int_>(obj) || py::isinstance<py::float_>(obj)) {
    return scalar_tensor(to_scalar(obj, op));
  }
  // After the plain numbers: the numpy check looks an attribute up, which costs
  // a raised and cleared AttributeError for them (W6 measures this path).
  if (is_complex_number(obj)) return complex_number_tensor(obj);
  if (py::isinstance<py::array>(obj)) return tensor_from_data(obj, std::nullopt, kCPU);  // as torch: a copy
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    throw TypeError(str(op, ": expected a Tensor or a number, got ", type_name(obj),
                        "; wrap it with ember.tensor(...) first"));
  }
  return scalar_tensor(to_scalar(obj, op));
}

Tensor optional_tensor_arg(py::handle obj, const char* op, const char* arg) {
  if (obj.is_none()) return Tensor();
  EMBER_CHECK(py::isinstance<Tensor>(obj), TypeError, op, ": ", arg, " must be a Tensor or None, got ",
              type_name(obj));
  return obj.cast<Tensor>();
}

std::vector<int64_t> to_int_list(py::handle obj, const char* op) {
  // Tensors first: a one-element integer tensor also passes PyIndex_Check.
  if (py::isinstance<Tensor>(obj)) {
    Tensor t = obj.cast<Tensor>();
    EMBER_CHECK(!t.is_floating_point(), TypeError, op, ": expected integers, got a ", dtype_name(t.dtype()), " tensor");
    std::vector<int64_t> out;
    const Tensor c = t.cpu().to(DType::Int64).contiguous();  // read here, on the host
    for (int64_t i = 0; i < c.numel(); ++i) out.push_back(c.data<int64_t>()[i]);
    return out;
  }
  // Python ints through to_int64, which names op when one does not fit.
  auto as_int = [op](py::handle h) { return py::isinstance<py::int_>(h) ? to_int64(h, op) : h.cast<int64_t>(); };
  if (PyIndex_Check(obj.ptr())) return {as_int(obj)};
  if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
    std::vector<int64_t> out;
    for (auto item : obj) {
      EMBER_CHECK(PyIndex_Check(item.ptr()), TypeError, op, ": expected a sequence of ints, got an element of type ",
                  type_name(item));
      // A tensor element passes PyIndex_Check; only a one-element integer one is an int.
      if (py::isinstance<Tensor>(item)) {
        const Tensor t = item.cast<Tensor>();
        EMBER_CHECK(t.numel() == 1 && !t.is_floating_point() && !is_complex(t.dtype()), TypeError, op,
                    ": expected a sequence of ints, got a tensor of shape ", t.shape_str(), " (",
                    dtype_name(t.dtype()), ") at position ", out.size(),
                    "; pass its values as a list (t.tolist()) or the tensor alone");
      }
      out.push_back(as_int(item));
    }
    return out;
  }
  throw TypeError(str(op, ": expected an int or a sequence of ints, got ", type_name(obj)));
}

Shape shape_from_args(const py::args& args, const char* op) {
  // One argument that is not an int: the shape as a sequence, or as a tensor of ints.
  if (args.size() == 1 && (!PyIndex_Check(args[0].ptr()) || py::isinstance<Tensor>(args[0]))) {
    return to_int_list(args[0], op);
  }
  return to_int_list(args, op);
}

Dims to_dims(py::handle obj, const char* op) {
  if (obj.is_none()) return {};
  return to_int_list(obj, op);
}

namespace {

// A list/tuple level of nested data (strings and tensors are not).
bool is_nested(py::handle obj) {
  return !py::isinstance<Tensor>(obj) && py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj);
}

// What the numbers of a nested list say about the tensor: the widest kind
// (bool 0, integer 1, floating 2, complex 3: the buffer they are read into)
// and the dtype torch gives the list, the promotion of every number's own
// dtype (Python numbers: bool, int64, the default float or complex; numpy
// scalars and 0-d tensors: theirs, so [np.float64(0.1)] stays float64).
struct Inferred {
  int kind = -1;
  std::optional<DType> dtype;
  void add(int k, DType d) {
    kind = std::max(kind, k);
    if (dtype != d) dtype = dtype ? promote_types(*dtype, d) : d;  // most lists hold one dtype
  }
};

void infer_item(py::handle obj, size_t depth, Shape& shape, Inferred& seen);

// Walks nested sequences: shape, and the numbers' kinds and dtypes. Numbers
// must all sit at the same depth, below every sequence ([[1], 2] is ragged).
void infer(py::handle obj, size_t depth, Shape& shape, Inferred& seen) {
  if (!is_nested(obj)) {
    EMBER_CHECK(shape.size() == depth, ValueError, "tensor: expected a sequence of length ",
                depth < shape.size() ? shape[depth] : 0, " at dim ", depth, " (got ", type_name(obj), ")");
    infer_item(obj, depth, shape, seen);
    return;
  }
  const int64_t n = static_cast<int64_t>(py::len(obj));
  if (shape.size() <= depth) {
    // Numbers were already seen at a depth above this one: ragged.
    EMBER_CHECK(seen.kind < 0, ValueError, "tensor: expected a number at dim ", depth, " (got a sequence)");
    shape.push_back(n);
  } else {
    EMBER_CHECK(shape[depth] == n, ValueError, "tensor: expected sequence of length ", shape[depth],
                " at dim ", depth, " (got ", n, ")");
  }
  for (auto item : obj) infer(item, depth + 1, shape, seen);
}

int kind_of(DType d) { return is_complex(d) ? 3 : is_floating(d) ? 2 : d == DType::Bool ? 0 : 1; }

// A numpy scalar's dtype when ember has it (int16 and the like count by kind).
std::optional<DType> numpy_scalar_dtype(py::handle obj) {
  static PyObject* const generic = py::object(py::module_::import("numpy").attr("generic")).release().ptr();
  const int is_scalar = PyObject_IsInstance(obj.ptr(), generic);
  if (is_scalar < 0) throw py::error_already_set();
  if (!is_scalar) return std::nullopt;
  try {
    return to_dtype(obj.attr("dtype"));
  } catch (const TypeError&) {
    return std::nullopt;
  }
}

void infer_item(py::handle obj, size_t depth, Shape& shape, Inferred& seen) {
  // Fast paths for plain Python numbers (large lists are mostly these).
  if (PyFloat_CheckExact(obj.ptr())) return seen.add(2, default_float_dtype());
  if (PyLong_CheckExact(obj.ptr())) return seen.add(1, DType::Int64);
  if (const auto d = numpy_scalar_dtype(obj)) return seen.add(kind_of(*d), *d);
  if (is_complex_number(obj)) return seen.add(3, complex_dtype_for(default_float_dtype()));
  // Tensors before integers: they define __index__ and would pass for one.
  if (py::isinstance<Tensor>(obj)) {
    Tensor t = obj.cast<Tensor>();
    EMBER_CHECK(t.numel() == 1 && t.dim() == 0, ValueError,
                "tensor: only one-element 0-d tensors can be mixed into nested lists (got shape ",
                shape_str(t.shape()), ")");
    return seen.add(kind_of(t.dtype()), t.dtype());
  }
  if (py::isinstance<py::bool_>(obj) || (py::hasattr(obj, "dtype") && py::str(obj.attr("dtype")).cast<std::string>() == "bool" &&
                                          !py::isinstance<py::sequence>(obj))) {
    return seen.add(0, DType::Bool);
  }
  if (PyIndex_Check(obj.ptr()) && !py::isinstance<py::float_>(obj)) return seen.add(1, DType::Int64);
  if (py::isinstance<py::float_>(obj) || (PyNumber_Check(obj.ptr()) && !py::isinstance<py::sequence>(obj))) {
    return seen.add(2, default_float_dtype());
  }
  throw TypeError(str("tensor: could not infer dtype of ", type_name(obj)));
}

void fill_from(py::handle obj, double*& out) {
  if (is_nested(obj)) {
    for (auto item : obj) fill_from(item, out);
    return;
  }
  *out++ = py::isinstance<Tensor>(obj) ? obj.cast<Tensor>().item().to_double() : py::reinterpret_borrow<py::object>(obj).attr("__float__")().cast<double>();
}

// (real, imaginary) pairs of doubles.
void fill_from_complex(py::handle obj, double*& out) {
  if (is_nested(obj)) {
    for (auto item : obj) fill_from_complex(item, out);
    return;
  }
  if (py::isinstance<Tensor>(obj)) {
    const Tensor t = obj.cast<Tensor>().to(kCPU, DType::Complex128, false, false).contiguous();
    const double* parts = static_cast<const double*>(t.data_ptr());
    *out++ = parts[0];
    *out++ = parts[1];
    return;
  }
  const Py_complex c = PyComplex_AsCComplex(obj.ptr());
  if (PyErr_Occurred()) throw py::error_already_set();
  *out++ = c.real;
  *out++ = c.imag;
}

void fill_from_int(py::handle obj, int64_t*& out) {
  if (is_nested(obj)) {
    for (auto item : obj) fill_from_int(item, out);
    return;
  }
  if (py::isinstance<Tensor>(obj)) {
    *out++ = obj.cast<Tensor>().item().to_int();
    return;
  }
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!index) {  // numpy.bool_ has no __index__, but int() takes it
    PyErr_Clear();
    index = py::reinterpret_steal<py::object>(PyNumber_Long(obj.ptr()));
    if (!index) throw py::error_already_set();
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  EMBER_CHECK(!overflow, Error, "tensor: value ", std::string(py::str(obj)),
              " does not fit in int64 (Overflow when unpacking long)");
  *out++ = static_cast<int64_t>(v);
}

// ember.tensor([300], dtype=uint8) raises, as in PyTorch, instead of wrapping.
void check_values_fit(const Tensor& t, DType target) {
  const int64_t n = t.numel();
  if (t.dtype() == DType::Float64) {
    const double* p = t.data<double>();
    for (int64_t i = 0; i < n; ++i) check_scalar_fits(Scalar(p[i]), target, "tensor");
  } else {
    const int64_t* p = t.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) check_scalar_fits(Scalar(p[i]), target, "tensor");
  }
}

}  // namespace

Tensor tensor_from_data(py::handle data, std::optional<DType> dtype, Device device) {
  if (py::isinstance<Tensor>(data)) {
    Tensor t = data.cast<Tensor>().detach();
    return t.to(device, dtype.value_or(t.dtype()), /*non_blocking=*/false, /*copy=*/true);
  }
  // numpy scalars (np.float64(2.0)) keep their dtype, as arrays do.
  const bool numpy_scalar = py::isinstance(data, py::module_::import("numpy").attr("generic"));
  if (py::isinstance<py::array>(data) || numpy_scalar) {
    py::array arr = py::array::ensure(data);
    if (arr.dtype().attr("byteorder").cast<std::string>() == ">") {  // to the machine's order: tensor() copies anyway
      arr = py::array::ensure(arr.attr("astype")(arr.dtype().attr("newbyteorder")("=")));
    }
    std::string name = py::str(arr.dtype().attr("name"));
    if (name == "float16" || name == "float32" || name == "float64" || name == "int64" || name == "int32" ||
        name == "int8" || name == "uint8" || name == "bool" || name == "complex64" || name == "complex128") {
      py::array c = py::array::ensure(arr, py::array::c_style);
      Shape shape(c.shape(), c.shape() + c.ndim());
      DType dt = to_dtype(c.dtype());
      Tensor t = empty(shape, dt);
      std::memcpy(t.data_ptr(), c.data(), t.numel() * t.element_size());
      return t.to(device, dtype.value_or(dt));
    }
    // other numpy types: go through float64 or int64
    return tensor_from_data(arr.attr("tolist")(), dtype, device);
  }
  Shape shape;
  Inferred seen;
  infer(data, 0, shape, seen);
  const int kind = seen.kind;
  const DType natural = seen.dtype.value_or(default_float_dtype());
  Tensor t;
  if (kind == 3) {
    t = empty(shape, DType::Complex128);
    double* p = static_cast<double*>(t.data_ptr());
    fill_from_complex(data, p);
  } else if (kind == 2 || kind == -1 || (dtype && (is_floating(*dtype) || is_complex(*dtype)))) {
    t = empty(shape, DType::Float64);
    double* p = t.data<double>();
    fill_from(data, p);
  } else {
    t = empty(shape, DType::Int64);
    int64_t* p = t.data<int64_t>();
    fill_from_int(data, p);
  }
  if (dtype && is_integral(*dtype) && !is_complex(t.dtype())) check_values_fit(t, *dtype);
  return t.to(device, dtype.value_or(natural));
}

void init_dtype(py::module_& m) {
  py::class_<PyDType>(m, "dtype")
      .def_property_readonly("itemsize", [](const PyDType& d) { return itemsize(d.value); })
      .def_property_readonly("is_floating_point", [](const PyDType& d) { return is_floating(d.value); })
      .def_property_readonly("is_complex", [](const PyDType& d) { return is_complex(d.value); })
      .def("to_real", [](const PyDType& d) { return dtype_object(complex_part_dtype(d.value)); })
      .def("to_complex", [](const PyDType& d) {
        EMBER_CHECK(is_floating(d.value) || is_complex(d.value), Error, "to_complex: expected a floating or complex "
                    "dtype, got ", dtype_name(d.value));
        return dtype_object(complex_dtype_for(d.value));
      })
      .def_property_readonly("is_signed", [](const PyDType& d) {
        return d.value != DType::Bool && d.value != DType::UInt8;
      })
      .def("__repr__", [](const PyDType& d) { return std::string("ember.") + dtype_name(d.value); })
      .def("__eq__", [](const PyDType& a, py::object b) {
        return py::isinstance<PyDType>(b) && b.cast<PyDType>().value == a.value;
      })
      .def("__hash__", [](const PyDType& d) { return static_cast<int>(d.value); })
      // Pickled by name, as torch pickles its dtypes: `ember._C.float32` comes back as the same
      // object, under every protocol (the state-based form aborted under protocols 0 and 1).
      .def("__reduce__", [](const PyDType& d) { return std::string(dtype_name(d.value)); })
      .def(py::pickle([](const PyDType& d) { return static_cast<int>(d.value); },  // files written before
                      [](int v) { return PyDType{static_cast<DType>(v)}; }));
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = static_cast<DType>(i);
    g_dtypes[i] = py::cast(PyDType{t});
    m.attr(dtype_name(t)) = g_dtypes[i];
  }
  m.attr("float") = g_dtypes[static_cast<int>(DType::Float32)];
  m.attr("double") = g_dtypes[static_cast<int>(DType::Float64)];
  m.attr("half") = g_dtypes[static_cast<int>(DType::Float16)];
  m.attr("long") = g_dtypes[static_cast<int>(DType::Int64)];
  m.attr("int") = g_dtypes[static_cast<int>(DType::Int32)];
  m.attr("cfloat") = g_dtypes[static_cast<int>(DType::Complex64)];
  m.attr("cdouble") = g_dtypes[static_cast<int>(DType::Complex128)];
  m.def("promote_types", [](py::handle a, py::handle b) { return dtype_object(promote_types(to_dtype(a), to_dtype(b))); });
  // A Python number promotes as a wrapped scalar (the lowest tier), as in torch.
  m.def("result_type", [](py::handle a, py::handle b) {
    EMBER_CHECK(py::isinstance<Tensor>(a) || py::isinstance<Tensor>(b), TypeError,
                "result_type: expected at least one Tensor, got ", type_name(a), " and ", type_name(b));
    return dtype_object(result_type(to_tensor_arg(a, "result_type"), to_tensor_arg(b, "result_type")));
  }, py::arg("tensor1"), py::arg("tensor2"));
  // Casting is allowed within a category and upward (bool < integer < floating < complex).
  m.def("can_cast", [](py::handle from, py::handle to) {
    auto category = [](DType t) { return t == DType::Bool ? 0 : is_complex(t) ? 3 : is_floating(t) ? 2 : 1; };
    return category(to_dtype(from)) <= category(to_dtype(to));
  }, py::arg("from_"), py::arg("to"));
  m.def("get_default_dtype", [] { return dtype_object(default_float_dtype()); });
  m.def("set_default_dtype", [](py::handle d) { set_default_float_dtype(to_dtype(d)); });

  py::class_<Device>(m, "device")
      .def(py::init([](py::object spec, std::optional<int> index) {
             if (py::isinstance<Device>(spec)) return spec.cast<Device>();
             // ember.device(1) (or a numpy integer): cuda:1
             if (PyIndex_Check(spec.ptr()) && !py::isinstance<py::bool_>(spec) && !py::isinstance<Tensor>(spec)) {
               EMBER_CHECK(!index, TypeError, "device: give the index once: ember.device(", std::string(py::str(spec)),
                           ") or ember.device('cuda', ", std::string(py::str(spec)), ")");
               PyObject* as_int = PyNumber_Index(spec.ptr());
               if (as_int == nullptr) throw py::error_already_set();
               return cuda_device_at(to_int64(py::reinterpret_steal<py::object>(as_int), "device"));
             }
             EMBER_CHECK(py::isinstance<py::str>(spec), TypeError,
                         "device: expected a string such as 'cpu' or 'cuda:0', an index, or an ember.device, got ",
                         type_name(spec));
             Device d(spec.cast<std::string>());
             if (index) {
               EMBER_CHECK(d.is_cuda() && spec.cast<std::string>().find(':') == std::string::npos, ValueError,
                           "device: an index is only allowed with type 'cuda' without an index in the string");
               d.index = *index;
             }
             return d;
           }),
           py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
      .def_property_readonly("index", [](const Device& d) -> py::object {
        return d.is_cpu() ? py::object(py::none()) : py::object(py::int_(d.index));
      })
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) {
        return d.is_cpu() ? std::string("device(type='cpu')")
                          : str("device(type='cuda', index=", d.index, ")");
      })
      .def("__eq__", [](const Device& a, py::object b) {
        if (py::isinstance<Device>(b)) return a == b.cast<Device>();
        if (py::isinstance<py::str>(b)) return a == Device(b.cast<std::string>());
        return false;
      })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type) * 1000 + d.index; })
      // Pickled as its string ("cuda:1"): copy.deepcopy of a module holding devices, spawned workers.
      // __reduce__ serves every protocol; the state pair reads what older versions wrote.
      .def("__reduce__", [](const Device& d) {
        return py::make_tuple(py::type::of<Device>(), py::make_tuple(d.str()));
      })
      .def(py::pickle([](const Device& d) { return py::make_tuple(d.str()); },
                      [](const py::tuple& t) {
                        EMBER_CHECK(t.size() == 1 && py::isinstance<py::str>(t[0]), ValueError,
                                    "device: cannot unpickle ", std::string(py::repr(t)));
                        return Device(t[0].cast<std::string>());
                      }));
}

}  // namespace ember::python
