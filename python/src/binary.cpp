// Binary ops and Python's arithmetic, comparison and bitwise operators, with
// scalar operands.
#include <pybind11/numpy.h>

#include "bind.h"

#include <ember/core/scalar_fits.h>

namespace ember::python {

namespace {
Tensor arg(py::handle o, const char* op) { return to_tensor_arg(o, op); }

// A fill value for `self`: a Python number must fit self's dtype, as in
// PyTorch (a tensor value is cast as it is).
Tensor fill_arg(py::handle value, DType self, const char* op) {
  if (!py::isinstance<Tensor>(value) && !is_complex_value(value)) check_scalar_fits(to_scalar(value, op), self, op);
  return arg(value, op);
}

// Whether `o` can be an operand of a comparison operator; otherwise the
// operator returns NotImplemented, so `x == None` is False as in PyTorch.
bool is_operand(py::handle o) {
  if (py::isinstance<Tensor>(o) || py::isinstance<py::bool_>(o) || py::isinstance<py::int_>(o) ||
      py::isinstance<py::float_>(o)) {
    return true;
  }
  if (PyComplex_Check(o.ptr())) return true;
  return !py::isinstance<py::array>(o) && !py::isinstance<py::sequence>(o) && !py::isinstance<py::str>(o) &&
         PyNumber_Check(o.ptr()) && py::hasattr(o, "__float__");
}

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);

// self <op> other for a comparison dunder.
template <BinaryFn F>
py::object compare_op(const Tensor& a, py::object b, const char* name) {
  if (!is_operand(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(F(a, arg(b, name)));
}

// ember.<name>(input, other) and Tensor.<name>(other) for a function of two tensors.
template <BinaryFn F>
void def_binary(py::module_& m, TensorClass& cls, const char* name) {
  m.def(name, [name](py::object a, py::object b) { return F(arg(a, name), arg(b, name)); }, py::arg("input"),
        py::arg("other"));
  cls.def(name, [name](const Tensor& a, py::object b) { return F(a, arg(b, name)); }, py::arg("other"));
}

void alias(py::module_& m, TensorClass& cls, const char* alias_name, const char* name) {
  m.attr(alias_name) = m.attr(name);
  cls.attr(alias_name) = cls.attr(name);
}

Tensor floor_div(const Tensor& a, const Tensor& b) { return floor_divide(a, b); }
Tensor where_fn(py::object cond, py::object a, py::object b) {
  return where(arg(cond, "where"), arg(a, "where"), arg(b, "where"));
}

void init_arithmetic(py::module_& m, TensorClass& cls) {
  m.def("add", [](py::object a, py::object b, py::object alpha) {
    return add(arg(a, "add"), arg(b, "add"), to_scalar(alpha, "add"));
  }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def("sub", [](py::object a, py::object b, py::object alpha) {
    return sub(arg(a, "sub"), arg(b, "sub"), to_scalar(alpha, "sub"));
  }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  m.def("mul", [](py::object a, py::object b) { return mul(arg(a, "mul"), arg(b, "mul")); }, py::arg("input"),
        py::arg("other"));
  m.def("div", [](py::object a, py::object b, std::optional<std::string> rm) {
    return div(arg(a, "div"), arg(b, "div"), rm);
  }, py::arg("input"), py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  m.attr("true_divide") = m.attr("div");

  cls.def("add", [](const Tensor& a, py::object b, py::object alpha) {
        return add(a, arg(b, "add"), to_scalar(alpha, "add"));
      }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def("sub", [](const Tensor& a, py::object b, py::object alpha) {
        return sub(a, arg(b, "sub"), to_scalar(alpha, "sub"));
      }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def("mul", [](const Tensor& a, py::object b) { return mul(a, arg(b, "mul")); }, py::arg("other"))
      .def("div", [](const Tensor& a, py::object b, std::optional<std::string> rm) {
        return div(a, arg(b, "div"), rm);
      }, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none())
      .def("true_divide", [](const Tensor& a, py::object b) { return div(a, arg(b, "div")); }, py::arg("other"))
      .def("add_", [](Tensor& a, py::object b, py::object alpha) -> Tensor& {
        return a.add_(arg(b, "add_"), to_scalar(alpha, "add_"));
      }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def("sub_", [](Tensor& a, py::object b, py::object alpha) -> Tensor& {
        return a.sub_(arg(b, "sub_"), to_scalar(alpha, "sub_"));
      }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def("mul_", [](Tensor& a, py::object b) -> Tensor& { return a.mul_(arg(b, "mul_")); }, py::arg("other"))
      .def("div_", [](Tensor& a, py::object b, std::optional<std::string> rm) -> Tensor& {
        return a.div_(arg(b, "div_"), rm);
      }, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none())
      .def("floor_divide_", [](Tensor& a, py::object b) -> Tensor& {
        return a.floor_divide_(arg(b, "floor_divide_"));
      }, py::arg("other"))
      .def("remainder_", [](Tensor& a, py::object b) -> Tensor& { return a.remainder_(arg(b, "remainder_")); },
           py::arg("other"));
  alias(m, cls, "subtract", "sub");
  alias(m, cls, "multiply", "mul");
  alias(m, cls, "divide", "div");
  cls.attr("subtract_") = cls.attr("sub_");
  cls.attr("multiply_") = cls.attr("mul_");
  cls.attr("divide_") = cls.attr("div_");

  def_binary<floor_div>(m, cls, "floor_divide");
  def_binary<remainder>(m, cls, "remainder");
  def_binary<maximum>(m, cls, "maximum");
  def_binary<minimum>(m, cls, "minimum");
}

void init_compare_logical(py::module_& m, TensorClass& cls) {
  def_binary<eq>(m, cls, "eq");
  m.def("equal", py::overload_cast<const Tensor&, const Tensor&>(&equal), py::arg("input"), py::arg("other"));
  cls.def("equal", [](const Tensor& a, const Tensor& b) { return equal(a, b); }, py::arg("other"));
  def_binary<ne>(m, cls, "ne");
  def_binary<lt>(m, cls, "lt");
  def_binary<le>(m, cls, "le");
  def_binary<gt>(m, cls, "gt");
  def_binary<ge>(m, cls, "ge");
  alias(m, cls, "not_equal", "ne");
  alias(m, cls, "less", "lt");
  alias(m, cls, "less_equal", "le");
  alias(m, cls, "greater", "gt");
  alias(m, cls, "greater_equal", "ge");
  def_binary<logical_and>(m, cls, "logical_and");
  def_binary<logical_or>(m, cls, "logical_or");
  def_binary<logical_xor>(m, cls, "logical_xor");
  def_binary<bitwise_and>(m, cls, "bitwise_and");
  def_binary<bitwise_or>(m, cls, "bitwise_or");
  def_binary<bitwise_xor>(m, cls, "bitwise_xor");
  m.def("logical_not", [](const Tensor& a) { return logical_not(a); }, py::arg("input"));
  m.def("bitwise_not", [](const Tensor& a) { return bitwise_not(a); }, py::arg("input"));
  cls.def("logical_not", [](const Tensor& a) { return logical_not(a); })
      .def("bitwise_not", [](const Tensor& a) { return bitwise_not(a); });
}

void init_select(py::module_& m, TensorClass& cls) {
  m.def("where", [](py::object cond, py::object a, py::object b) -> py::object {
    if (a.is_none() && b.is_none()) {
      // where(condition) is nonzero(condition, as_tuple=True), from the index family.
      py::module_ ember = py::module_::import("ember");
      EMBER_CHECK(py::hasattr(ember, "nonzero"), NotImplementedError,
                  "where: the one-argument form needs ember.nonzero, which this build lacks");
      return ember.attr("nonzero")(cond, py::arg("as_tuple") = true);
    }
    EMBER_CHECK(!a.is_none() && !b.is_none(), TypeError, "where: expected both input and other, or neither");
    return py::cast(where_fn(cond, a, b));
  }, py::arg("condition"), py::arg("input") = py::none(), py::arg("other") = py::none());
  m.def("lerp", [](py::object s, py::object e, py::object w) {
    return lerp(arg(s, "lerp"), arg(e, "lerp"), arg(w, "lerp"));
  }, py::arg("input"), py::arg("end"), py::arg("weight"));
  m.def("masked_fill", [](py::object a, py::object mask, py::object value) {
    const Tensor self = arg(a, "masked_fill");
    return masked_fill(self, arg(mask, "masked_fill"), fill_arg(value, self.dtype(), "masked_fill"));
  }, py::arg("input"), py::arg("mask"), py::arg("value"));

  cls.def("where", [](const Tensor& a, py::object cond, py::object b) {
        return where(arg(cond, "where"), a, arg(b, "where"));
      }, py::arg("condition"), py::arg("other"))
      .def("lerp", [](const Tensor& a, py::object e, py::object w) {
        return lerp(a, arg(e, "lerp"), arg(w, "lerp"));
      }, py::arg("end"), py::arg("weight"))
      .def("lerp_", [](Tensor& a, py::object e, py::object w) -> Tensor& {
        return a.lerp_(arg(e, "lerp_"), arg(w, "lerp_"));
      }, py::arg("end"), py::arg("weight"))
      .def("masked_fill", [](const Tensor& a, py::object mask, py::object value) {
        return masked_fill(a, arg(mask, "masked_fill"), fill_arg(value, a.dtype(), "masked_fill"));
      }, py::arg("mask"), py::arg("value"))
      .def("masked_fill_", [](Tensor& a, py::object mask, py::object value) -> Tensor& {
        return a.masked_fill_(arg(mask, "masked_fill_"), fill_arg(value, a.dtype(), "masked_fill_"));
      }, py::arg("mask"), py::arg("value"));
}

void init_operators(TensorClass& cls) {
  cls.def("__add__", [](const Tensor& a, py::object b) { return add(a, arg(b, "add")); }, py::is_operator())
      .def("__radd__", [](const Tensor& a, py::object b) { return add(arg(b, "add"), a); }, py::is_operator())
      .def("__sub__", [](const Tensor& a, py::object b) { return sub(a, arg(b, "sub")); }, py::is_operator())
      .def("__rsub__", [](const Tensor& a, py::object b) { return sub(arg(b, "sub"), a); }, py::is_operator())
      .def("__mul__", [](const Tensor& a, py::object b) { return mul(a, arg(b, "mul")); }, py::is_operator())
      .def("__rmul__", [](const Tensor& a, py::object b) { return mul(arg(b, "mul"), a); }, py::is_operator())
      .def("__truediv__", [](const Tensor& a, py::object b) { return div(a, arg(b, "div")); }, py::is_operator())
      .def("__rtruediv__", [](const Tensor& a, py::object b) { return div(arg(b, "div"), a); }, py::is_operator())
      .def("__floordiv__", [](const Tensor& a, py::object b) {
        return floor_divide(a, arg(b, "floor_divide"));
      }, py::is_operator())
      .def("__rfloordiv__", [](const Tensor& a, py::object b) {
        return floor_divide(arg(b, "floor_divide"), a);
      }, py::is_operator())
      .def("__mod__", [](const Tensor& a, py::object b) { return remainder(a, arg(b, "remainder")); },
           py::is_operator())
      .def("__rmod__", [](const Tensor& a, py::object b) { return remainder(arg(b, "remainder"), a); },
           py::is_operator())
      .def("__iadd__", [](Tensor& a, py::object b) -> Tensor& { return a.add_(arg(b, "add_")); }, py::is_operator())
      .def("__isub__", [](Tensor& a, py::object b) -> Tensor& { return a.sub_(arg(b, "sub_")); }, py::is_operator())
      .def("__imul__", [](Tensor& a, py::object b) -> Tensor& { return a.mul_(arg(b, "mul_")); }, py::is_operator())
      .def("__itruediv__", [](Tensor& a, py::object b) -> Tensor& { return a.div_(arg(b, "div_")); },
           py::is_operator())
      .def("__ifloordiv__", [](Tensor& a, py::object b) -> Tensor& {
        return a.floor_divide_(arg(b, "floor_divide_"));
      }, py::is_operator())
      .def("__imod__", [](Tensor& a, py::object b) -> Tensor& { return a.remainder_(arg(b, "remainder_")); },
           py::is_operator());

  // Comparisons return bool tensors; other operand types get NotImplemented.
  cls.def("__eq__", [](const Tensor& a, py::object b) { return compare_op<eq>(a, b, "eq"); })
      .def("__ne__", [](const Tensor& a, py::object b) { return compare_op<ne>(a, b, "ne"); })
      .def("__lt__", [](const Tensor& a, py::object b) { return compare_op<lt>(a, b, "lt"); })
      .def("__le__", [](const Tensor& a, py::object b) { return compare_op<le>(a, b, "le"); })
      .def("__gt__", [](const Tensor& a, py::object b) { return compare_op<gt>(a, b, "gt"); })
      .def("__ge__", [](const Tensor& a, py::object b) { return compare_op<ge>(a, b, "ge"); });

  // &, |, ^, ~ are bitwise (logical on bool tensors), as in PyTorch. In place
  // they write back like any in-place op, keeping self's dtype.
  cls.def("__and__", [](const Tensor& a, py::object b) { return bitwise_and(a, arg(b, "bitwise_and")); },
          py::is_operator())
      .def("__rand__", [](const Tensor& a, py::object b) { return bitwise_and(arg(b, "bitwise_and"), a); },
           py::is_operator())
      .def("__or__", [](const Tensor& a, py::object b) { return bitwise_or(a, arg(b, "bitwise_or")); },
           py::is_operator())
      .def("__ror__", [](const Tensor& a, py::object b) { return bitwise_or(arg(b, "bitwise_or"), a); },
           py::is_operator())
      .def("__xor__", [](const Tensor& a, py::object b) { return bitwise_xor(a, arg(b, "bitwise_xor")); },
           py::is_operator())
      .def("__rxor__", [](const Tensor& a, py::object b) { return bitwise_xor(arg(b, "bitwise_xor"), a); },
           py::is_operator())
      .def("__iand__", [](Tensor& a, py::object b) -> Tensor& {
        return a.copy_(bitwise_and(a, arg(b, "bitwise_and_")));
      }, py::is_operator())
      .def("__ior__", [](Tensor& a, py::object b) -> Tensor& {
        return a.copy_(bitwise_or(a, arg(b, "bitwise_or_")));
      }, py::is_operator())
      .def("__ixor__", [](Tensor& a, py::object b) -> Tensor& {
        return a.copy_(bitwise_xor(a, arg(b, "bitwise_xor_")));
      }, py::is_operator())
      .def("__invert__", [](const Tensor& a) { return bitwise_not(a); });
}

}  // namespace

void init_binary(py::module_& m) {
  auto& cls = tensor_class();
  init_arithmetic(m, cls);
  init_compare_logical(m, cls);
  init_select(m, cls);
  init_operators(cls);
  // Defining __eq__ would make Tensor unhashable; keep identity hashing as
  // PyTorch does (tensors are dict keys for optimizer state, hooks, ...).
  cls.attr("__hash__") = py::module_::import("builtins").attr("object").attr("__hash__");
}

}  // namespace ember::python
