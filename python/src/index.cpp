// Bindings of the index family, and Tensor.__getitem__ / __setitem__: a
// Python subscript is turned into TensorIndex items (core/ops/index.h).
#include <pybind11/numpy.h>

#include "bind.h"

#include <ember/core/ops/index_kernels.h>
#include <ember/core/scalar_fits.h>

namespace ember::python {

namespace {

bool is_numpy_scalar(py::handle obj) {
  return py::hasattr(obj, "dtype") && py::hasattr(obj, "ndim") && !py::isinstance<Tensor>(obj) &&
         !py::isinstance<py::array>(obj);
}

// A slice start/stop/step; ints past int64 clamp, as Python's slices do.
std::optional<int64_t> slice_bound(py::handle v) {
  if (v.is_none()) return std::nullopt;
  if (py::isinstance<Tensor>(v)) {
    const Tensor t = v.cast<Tensor>();
    EMBER_CHECK(t.numel() == 1, TypeError, "slice indices must be integers, None or one-element tensors, got a tensor "
                "of shape ", t.shape_str());
    return t.item().to_int();
  }
  EMBER_CHECK(PyIndex_Check(v.ptr()), TypeError,
              "slice indices must be integers or None or have an __index__ method, got ", type_name(v));
  py::object i = py::reinterpret_borrow<py::object>(v).attr("__index__")();
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0) return overflow > 0 ? INT64_MAX : INT64_MIN;
  return x;
}

// An index tensor from a list, tuple or numpy array (an empty list is int64).
Tensor index_tensor(py::handle obj) {
  if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::array>(obj) && py::len(obj) == 0) {
    return empty({0}, DType::Int64);
  }
  return tensor_from_data(obj, std::nullopt, kCPU);
}

[[noreturn]] void invalid_index(py::handle obj) {
  throw IndexError(str("only integers, slices (`:`), ellipsis (`...`), None and long or byte tensors are valid "
                       "indices (got ", type_name(obj), ")"));
}

TensorIndex to_index(py::handle obj) {
  if (obj.is_none()) return TensorIndex::NewAxis();
  if (obj.ptr() == Py_Ellipsis) return TensorIndex::Dots();
  if (py::isinstance<py::bool_>(obj)) return TensorIndex::Bool(obj.cast<bool>());
  if (py::isinstance<py::int_>(obj)) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    EMBER_CHECK(overflow == 0, IndexError, "index ", std::string(py::str(obj)), " is out of range for int64");
    return TensorIndex::Int(i);
  }
  if (py::isinstance<Tensor>(obj)) {
    // A 0-d integer tensor indexes like the integer it holds (x[t] is then a view, as in torch).
    const Tensor t = obj.cast<Tensor>();
    if (t.dim() == 0 && is_integral(t.dtype()) && t.dtype() != DType::UInt8) {
      return TensorIndex::Int(t.item().to_int());
    }
    return TensorIndex::Of(t);
  }
  if (py::isinstance<py::slice>(obj)) {
    const auto step = slice_bound(obj.attr("step"));
    EMBER_CHECK(!step || *step != 0, ValueError, "slice step cannot be zero");
    EMBER_CHECK(!step || *step > 0, ValueError, "step must be greater than zero");
    return TensorIndex::Slice(slice_bound(obj.attr("start")), slice_bound(obj.attr("stop")), step.value_or(1));
  }
  if (is_numpy_scalar(obj)) {
    const std::string kind = py::str(obj.attr("dtype").attr("kind"));
    if (kind == "b") return TensorIndex::Bool(obj.cast<bool>());
    if (kind == "i" || kind == "u") return TensorIndex::Int(obj.attr("__index__")().cast<int64_t>());
    invalid_index(obj);
  }
  if (py::isinstance<py::array>(obj) || py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    return TensorIndex::Of(index_tensor(obj));
  }
  if (PyRange_Check(obj.ptr())) {
    return TensorIndex::Of(index_tensor(py::module_::import("builtins").attr("list")(obj)));
  }
  invalid_index(obj);
}

// torch's (and old numpy's) rule: a list index holding a tensor, a sequence, a
// slice, Ellipsis or None is read as a tuple of indices, x[[t0, t2]] as x[t0, t2].
// torch warns that this is deprecated; so does ember.
bool list_as_tuple(py::handle key) {
  if (!py::isinstance<py::list>(key) || py::len(key) >= 32) return false;
  for (py::handle item : key) {
    if (py::isinstance<Tensor>(item) || py::isinstance<py::slice>(item) || item.ptr() == Py_Ellipsis ||
        item.is_none() || (py::isinstance<py::sequence>(item) && !py::isinstance<py::str>(item)) ||
        py::isinstance<py::array>(item)) {
      const char* message = "indexing with a list that holds tensors, lists, slices, None or Ellipsis reads it as "
                            "a tuple of indices (x[[a, b]] is x[a, b]), as torch does for now; torch will read it "
                            "as one index tensor in a later version: write x[tuple(seq)] or x[tensor(seq)]";
      if (PyErr_WarnEx(PyExc_UserWarning, message, 1) != 0) throw py::error_already_set();
      return true;
    }
  }
  return false;
}

std::vector<TensorIndex> to_indices(py::handle key) {
  std::vector<TensorIndex> items;
  if (py::isinstance<py::tuple>(key) || list_as_tuple(key)) {
    for (py::handle item : key) items.push_back(to_index(item));
  } else {
    items.push_back(to_index(key));
  }
  return items;
}

// An assigned value: a tensor, a Python number, or array-like data.
Tensor to_value(py::handle value, const Tensor& like) {
  if (py::isinstance<Tensor>(value)) return value.cast<Tensor>();
  if (py::isinstance<py::array>(value) || py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    return tensor_from_data(value, like.dtype(), like.device());
  }
  if (PyComplex_Check(value.ptr())) return to_tensor_arg(value, "setitem").to(like.device());
  const Scalar v = to_scalar(value, "setitem");
  check_scalar_fits(v, like.dtype(), "setitem");
  return scalar_tensor(v, like.device());
}

IndexList to_index_list(py::handle indices) {
  IndexList out;
  for (py::handle t : indices) {
    if (t.is_none()) out.push_back(std::nullopt);
    else if (py::isinstance<Tensor>(t)) out.push_back(t.cast<Tensor>());
    else out.push_back(index_tensor(t));
  }
  return out;
}

// scatter's src: a tensor, or a number given as src or value.
Tensor scatter_impl(const Tensor& t, int64_t dim, const Tensor& index, py::object src, py::object value, bool add) {
  const char* op = add ? "scatter_add" : "scatter";
  py::object s = src.is_none() ? value : src;
  EMBER_CHECK(!s.is_none(), TypeError, op, ": expected src or value");
  if (py::isinstance<Tensor>(s)) return add ? scatter_add(t, dim, index, s.cast<Tensor>()) : scatter(t, dim, index, s.cast<Tensor>());
  EMBER_CHECK(!add, TypeError, "scatter_add: src must be a Tensor, got ", type_name(s));
  const Scalar v = to_scalar(s, op);
  check_scalar_fits(v, t.dtype(), op);
  return scatter(t, dim, index, v);
}

py::object nonzero_result(const Tensor& t, bool as_tuple) {
  Tensor nz = nonzero(t);
  if (!as_tuple) return py::cast(nz);
  py::tuple out(std::max<int64_t>(t.dim(), 1));
  if (t.dim() == 0) {
    out[0] = py::cast(zeros({nz.size(0)}, DType::Int64, t.device()));  // [0] when nonzero, else empty
    return out;
  }
  for (int64_t k = 0; k < t.dim(); ++k) out[k] = py::cast(nz.select(1, k).contiguous());
  return out;
}

}  // namespace

void init_index(py::module_& m) {
  auto& cls = tensor_class();
  cls.def("__getitem__", [](const Tensor& t, py::handle key) { return getitem(t, to_indices(key)); })
      .def("__setitem__",
           [](Tensor& t, py::handle key, py::handle value) { setitem(t, to_indices(key), to_value(value, t)); })
      .def("index_select", &Tensor::index_select, py::arg("dim"), py::arg("index"))
      .def("gather", &Tensor::gather, py::arg("dim"), py::arg("index"))
      .def("scatter",
           [](const Tensor& t, int64_t dim, const Tensor& index, py::object src, py::object value) {
             return scatter_impl(t, dim, index, src, value, false);
           },
           py::arg("dim"), py::arg("index"), py::arg("src") = py::none(), py::kw_only(), py::arg("value") = py::none())
      .def("scatter_",
           [](Tensor& t, int64_t dim, const Tensor& index, py::object src, py::object value) -> Tensor& {
             py::object s = src.is_none() ? value : src;
             if (py::isinstance<Tensor>(s)) return t.scatter_(dim, index, s.cast<Tensor>());
             const Scalar v = to_scalar(s, "scatter_");
             check_scalar_fits(v, t.dtype(), "scatter_");
             return ember::scatter_(t, dim, index, v);
           },
           py::arg("dim"), py::arg("index"), py::arg("src") = py::none(), py::kw_only(), py::arg("value") = py::none())
      .def("scatter_add", &Tensor::scatter_add, py::arg("dim"), py::arg("index"), py::arg("src"))
      .def("scatter_add_", &Tensor::scatter_add_, py::arg("dim"), py::arg("index"), py::arg("src"))
      .def("index_add",
           [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, py::object alpha) {
             return t.index_add(dim, index, source, to_scalar(alpha, "index_add"));
           },
           py::arg("dim"), py::arg("index"), py::arg("source"), py::kw_only(), py::arg("alpha") = 1)
      .def("index_add_",
           [](Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, py::object alpha) -> Tensor& {
             return t.index_add_(dim, index, source, to_scalar(alpha, "index_add_"));
           },
           py::arg("dim"), py::arg("index"), py::arg("source"), py::kw_only(), py::arg("alpha") = 1)
      .def("take_along_dim", &Tensor::take_along_dim, py::arg("indices"), py::arg("dim") = py::none())
      .def("nonzero", &nonzero_result, py::kw_only(), py::arg("as_tuple") = false)
      .def("masked_select", [](const Tensor& t, const Tensor& mask) { return masked_select(t, mask); },
           py::arg("mask"))
      .def("index_put_",
           [](Tensor& t, py::tuple indices, py::handle values, bool accumulate) -> Tensor& {
             return index_put_(t, to_index_list(indices), to_value(values, t), accumulate);
           },
           py::arg("indices"), py::arg("values"), py::arg("accumulate") = false)
      .def("index_put",
           [](const Tensor& t, py::tuple indices, py::handle values, bool accumulate) {
             return index_put(t, to_index_list(indices), to_value(values, t), accumulate);
           },
           py::arg("indices"), py::arg("values"), py::arg("accumulate") = false);

  // For the index ops written in Python (index_copy_, scatter_reduce): the C++ ops' range check.
  m.def("_check_index_range", [](const Tensor& index, int64_t size, int64_t dim, const std::string& op,
                                 bool runtime_error) {
    if (index.numel() == 0) return;
    const Tensor i64 = index.dtype() == DType::Int64 ? index : index.to(DType::Int64);
    index_kernels::check_range(i64, size, dim, op.c_str(), /*allow_negative=*/false,
                               runtime_error ? cpu::RangeError::Runtime : cpu::RangeError::Index);
  }, py::arg("index"), py::arg("size"), py::arg("dim"), py::arg("op"), py::arg("runtime_error") = false);
  m.def("index_select", &ember::index_select, py::arg("input"), py::arg("dim"), py::arg("index"));
  m.def("gather", &ember::gather, py::arg("input"), py::arg("dim"), py::arg("index"));
  m.def("scatter",
        [](const Tensor& t, int64_t dim, const Tensor& index, py::object src, py::object value) {
          return scatter_impl(t, dim, index, src, value, false);
        },
        py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src") = py::none(), py::kw_only(),
        py::arg("value") = py::none());
  m.def("scatter_add", [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src) {
        return scatter_add(t, dim, index, src);
      }, py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src"));
  m.def("index_add",
        [](const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, py::object alpha) {
          return index_add(t, dim, index, source, to_scalar(alpha, "index_add"));
        },
        py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("source"), py::kw_only(), py::arg("alpha") = 1);
  m.def("take_along_dim", &ember::take_along_dim, py::arg("input"), py::arg("indices"), py::arg("dim") = py::none());
  m.def("nonzero", &nonzero_result, py::arg("input"), py::kw_only(), py::arg("as_tuple") = false);
  m.def("masked_select", &ember::masked_select, py::arg("input"), py::arg("mask"));
  m.def("index_put",
        [](const Tensor& t, py::tuple indices, py::handle values, bool accumulate) {
          return index_put(t, to_index_list(indices), to_value(values, t), accumulate);
        },
        py::arg("input"), py::arg("indices"), py::arg("values"), py::arg("accumulate") = false);
  // torch has it as torch.nn.functional.one_hot; the nn package re-exports this.
  m.def("_one_hot", &ember::one_hot, py::arg("input"), py::arg("num_classes") = -1);
}

}  // namespace ember::python
