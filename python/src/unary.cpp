// Bindings of the unary family: ember.<op>, Tensor.<op> and Tensor.<op>_,
// the aliases PyTorch has (absolute, negative, clip...), the -x, abs(x), +x
// and ** operators, and gelu / silu / softplus under ember._C._nn (as in
// torch._C._nn) for ember.nn.functional.
#include <ember/core/ops/unary_math.h>

#include "bind.h"

namespace ember::python {

namespace {

Tensor input_tensor(py::handle o, const char* op) {
  if (py::isinstance<Tensor>(o)) return o.cast<Tensor>();
  throw TypeError(str(op, ": expected a Tensor as input, got ", type_name(o)));
}

Tensor& self_tensor(py::handle o) { return o.cast<Tensor&>(); }

std::optional<double> optional_double(py::handle o, const char* op) {
  if (o.is_none()) return std::nullopt;
  return to_scalar(o, op).to_double();
}

// A clamp bound: None, a Python number or a tensor.
bool is_tensor(py::handle o) { return py::isinstance<Tensor>(o); }

std::optional<Scalar> scalar_bound(py::handle o, const char* op) {
  if (o.is_none()) return std::nullopt;
  return to_scalar(o, op);
}

Tensor tensor_bound(py::handle o, const char* op) {
  if (o.is_none()) return Tensor();
  return to_tensor_arg(o, op);
}

Tensor clamp_any(const Tensor& x, py::handle lo, py::handle hi, const char* op) {
  if (is_tensor(lo) || is_tensor(hi)) return clamp(x, tensor_bound(lo, op), tensor_bound(hi, op));
  return clamp(x, scalar_bound(lo, op), scalar_bound(hi, op));
}

void clamp_any_(Tensor& x, py::handle lo, py::handle hi, const char* op) {
  if (is_tensor(lo) || is_tensor(hi)) x.clamp_(tensor_bound(lo, op), tensor_bound(hi, op));
  else x.clamp_(scalar_bound(lo, op), scalar_bound(hi, op));
}

// pow with any mix of tensor and number operands (at least one tensor).
Tensor pow_any(py::handle base, py::handle exponent, const char* op) {
  if (!is_tensor(base)) {
    EMBER_CHECK(is_tensor(exponent), TypeError, op, ": expected a Tensor as input or exponent, got ",
                type_name(base), " and ", type_name(exponent));
    return pow(to_scalar(base, op), exponent.cast<Tensor>());
  }
  const Tensor x = base.cast<Tensor>();
  if (is_tensor(exponent)) return pow(x, exponent.cast<Tensor>());
  return pow(x, to_scalar(exponent, op));
}

void pow_any_(Tensor& x, py::handle exponent, const char* op) {
  if (is_tensor(exponent)) x.pow_(exponent.cast<Tensor>());
  else x.pow_(to_scalar(exponent, op));
}

struct Plain {
  const char* name;
  Tensor (*fn)(const Tensor&);
};

struct InPlace {
  const char* name;  // without the trailing underscore
  Tensor& (Tensor::*fn)();
};

Tensor positive(const Tensor& x) {
  EMBER_CHECK(x.dtype() != DType::Bool, Error,
              "positive: the `+` operator, on a bool tensor is not supported.");
  return x;
}

}  // namespace

void init_unary(py::module_& m) {
  auto& cls = tensor_class();

  // Ops of one tensor, with their PyTorch aliases.
  static const Plain plain[] = {
      {"neg", neg}, {"negative", neg}, {"abs", abs}, {"absolute", abs}, {"sign", sign},
      {"square", square}, {"floor", floor}, {"ceil", ceil}, {"exp", exp}, {"log", log},
      {"log1p", log1p}, {"expm1", expm1}, {"sqrt", sqrt}, {"rsqrt", rsqrt}, {"sin", sin},
      {"cos", cos}, {"tanh", tanh}, {"sigmoid", sigmoid}, {"reciprocal", reciprocal},
      {"erf", erf}, {"relu", relu}, {"positive", positive},
  };
  for (const auto& p : plain) {
    const char* name = p.name;
    auto fn = p.fn;
    m.def(name, [name, fn](py::object x) { return fn(input_tensor(x, name)); }, py::arg("input"));
    cls.def(name, [fn](const Tensor& x) { return fn(x); });
  }

  // The extra math functions (core/ops/unary_math.h), with numpy-style aliases as in PyTorch.
  static const Plain math[] = {
      {"log2", log2}, {"log10", log10}, {"exp2", exp2}, {"sinh", sinh}, {"cosh", cosh}, {"tan", tan},
      {"asin", asin}, {"arcsin", asin}, {"acos", acos}, {"arccos", acos}, {"atan", atan}, {"arctan", atan},
      {"asinh", asinh}, {"arcsinh", asinh}, {"acosh", acosh}, {"arccosh", acosh}, {"atanh", atanh},
      {"arctanh", atanh}, {"trunc", trunc}, {"fix", trunc}, {"frac", frac}, {"erfc", erfc}, {"erfinv", erfinv},
      {"lgamma", lgamma}, {"digamma", digamma},
  };
  for (const auto& p : math) {
    const char* name = p.name;
    auto fn = p.fn;
    m.def(name, [name, fn](py::object x) { return fn(input_tensor(x, name)); }, py::arg("input"));
    cls.def(name, [fn](const Tensor& x) { return fn(x); });
  }
  struct Binary {
    const char* name;
    Tensor (*fn)(const Tensor&, const Tensor&);
  };
  static const Binary math2[] = {
      {"atan2", atan2}, {"arctan2", atan2}, {"hypot", hypot}, {"fmod", fmod}, {"copysign", copysign},
      {"logaddexp", logaddexp}, {"logaddexp2", logaddexp2}, {"xlogy", xlogy},
  };
  for (const auto& p : math2) {
    const char* name = p.name;
    auto fn = p.fn;
    m.def(name, [name, fn](py::object a, py::object b) {
      // A number is accepted for either operand (not both), as in torch.
      EMBER_CHECK(is_tensor(a) || is_tensor(b), TypeError, name, ": expected a Tensor as input or other, got ",
                  type_name(a), " and ", type_name(b));
      return fn(to_tensor_arg(a, name), to_tensor_arg(b, name));
    }, py::arg("input"), py::arg("other"));
    cls.def(name, [name, fn](const Tensor& a, py::object b) { return fn(a, to_tensor_arg(b, name)); },
            py::arg("other"));
  }
  m.def("polygamma", [](int64_t n, py::object x) {
    const Tensor t = input_tensor(x, "polygamma");
    EMBER_CHECK(n == 0 || n == 1, NotImplementedError, "polygamma: only n = 0 (digamma) and n = 1 are implemented, "
                "got n = ", n);
    return n == 0 ? digamma(t) : trigamma(t);
  }, py::arg("n"), py::arg("input"));

  static const InPlace inplace[] = {
      {"neg", &Tensor::neg_}, {"negative", &Tensor::neg_}, {"abs", &Tensor::abs_},
      {"absolute", &Tensor::abs_}, {"sign", &Tensor::sign_}, {"square", &Tensor::square_},
      {"floor", &Tensor::floor_}, {"ceil", &Tensor::ceil_}, {"exp", &Tensor::exp_},
      {"log", &Tensor::log_}, {"log1p", &Tensor::log1p_}, {"expm1", &Tensor::expm1_},
      {"sqrt", &Tensor::sqrt_}, {"rsqrt", &Tensor::rsqrt_}, {"sin", &Tensor::sin_},
      {"cos", &Tensor::cos_}, {"tanh", &Tensor::tanh_}, {"sigmoid", &Tensor::sigmoid_},
      {"reciprocal", &Tensor::reciprocal_}, {"erf", &Tensor::erf_}, {"relu", &Tensor::relu_},
  };
  for (const auto& p : inplace) {
    const std::string name = std::string(p.name) + "_";
    auto fn = p.fn;
    // Returns the same Python object, as PyTorch does.
    cls.def(name.c_str(), [fn](py::object self) { (self_tensor(self).*fn)(); return self; });
    m.def(name.c_str(), [fn, name](py::object x) {
      input_tensor(x, name.c_str());
      (self_tensor(x).*fn)();
      return x;
    }, py::arg("input"));
  }

  // round(decimals=)
  m.def("round", [](py::object x, int64_t decimals) { return round(input_tensor(x, "round"), decimals); },
        py::arg("input"), py::kw_only(), py::arg("decimals") = 0);
  cls.def("round", [](const Tensor& x, int64_t decimals) { return round(x, decimals); },
          py::kw_only(), py::arg("decimals") = 0);
  cls.def("round_", [](py::object self, int64_t decimals) {
    Tensor& x = self_tensor(self);
    if (decimals == 0) x.round_();
    else x.copy_(round(x.detach(), decimals));  // no gradient either way
    return self;
  }, py::kw_only(), py::arg("decimals") = 0);

  // clamp / clip with number or tensor bounds
  for (const char* name : {"clamp", "clip"}) {
    m.def(name, [name](py::object x, py::object lo, py::object hi) {
      return clamp_any(input_tensor(x, name), lo, hi, name);
    }, py::arg("input"), py::arg("min") = py::none(), py::arg("max") = py::none());
    cls.def(name, [name](const Tensor& x, py::object lo, py::object hi) { return clamp_any(x, lo, hi, name); },
            py::arg("min") = py::none(), py::arg("max") = py::none());
    const std::string inplace_name = std::string(name) + "_";
    cls.def(inplace_name.c_str(), [inplace_name](py::object self, py::object lo, py::object hi) {
      clamp_any_(self_tensor(self), lo, hi, inplace_name.c_str());
      return self;
    }, py::arg("min") = py::none(), py::arg("max") = py::none());
  }
  m.def("clamp_min", [](py::object x, py::object lo) {
    return clamp_any(input_tensor(x, "clamp_min"), lo, py::none(), "clamp_min");
  }, py::arg("input"), py::arg("min"));
  m.def("clamp_max", [](py::object x, py::object hi) {
    return clamp_any(input_tensor(x, "clamp_max"), py::none(), hi, "clamp_max");
  }, py::arg("input"), py::arg("max"));
  cls.def("clamp_min", [](const Tensor& x, py::object lo) { return clamp_any(x, lo, py::none(), "clamp_min"); },
          py::arg("min"))
      .def("clamp_max", [](const Tensor& x, py::object hi) { return clamp_any(x, py::none(), hi, "clamp_max"); },
           py::arg("max"))
      .def("clamp_min_", [](py::object self, py::object lo) {
        clamp_any_(self_tensor(self), lo, py::none(), "clamp_min_");
        return self;
      }, py::arg("min"))
      .def("clamp_max_", [](py::object self, py::object hi) {
        clamp_any_(self_tensor(self), py::none(), hi, "clamp_max_");
        return self;
      }, py::arg("max"));

  // pow and its operators
  m.def("pow", [](py::object base, py::object exponent) { return pow_any(base, exponent, "pow"); },
        py::arg("input"), py::arg("exponent"));
  cls.def("pow", [](py::object self, py::object e) { return pow_any(self, e, "pow"); }, py::arg("exponent"))
      .def("pow_", [](py::object self, py::object e) {
        pow_any_(self_tensor(self), e, "pow_");
        return self;
      }, py::arg("exponent"))
      .def("__pow__", [](py::object self, py::object e) { return pow_any(self, e, "pow"); }, py::is_operator())
      .def("__rpow__", [](py::object self, py::object b) { return pow_any(b, self, "pow"); }, py::is_operator())
      .def("__ipow__", [](py::object self, py::object e) {
        pow_any_(self_tensor(self), e, "pow_");
        return self;
      }, py::is_operator())
      .def("__neg__", [](const Tensor& x) { return neg(x); })
      .def("__abs__", [](const Tensor& x) { return abs(x); })
      .def("__pos__", [](const Tensor& x) { return positive(x); });

  // nan_to_num
  m.def("nan_to_num", [](py::object x, py::object nan, py::object posinf, py::object neginf) {
    return nan_to_num(input_tensor(x, "nan_to_num"), optional_double(nan, "nan_to_num"),
                      optional_double(posinf, "nan_to_num"), optional_double(neginf, "nan_to_num"));
  }, py::arg("input"), py::arg("nan") = 0.0, py::arg("posinf") = py::none(), py::arg("neginf") = py::none());
  cls.def("nan_to_num", [](const Tensor& x, py::object nan, py::object posinf, py::object neginf) {
        return nan_to_num(x, optional_double(nan, "nan_to_num"), optional_double(posinf, "nan_to_num"),
                          optional_double(neginf, "nan_to_num"));
      }, py::arg("nan") = 0.0, py::arg("posinf") = py::none(), py::arg("neginf") = py::none())
      .def("nan_to_num_", [](py::object self, py::object nan, py::object posinf, py::object neginf) {
        self_tensor(self).nan_to_num_(optional_double(nan, "nan_to_num_"), optional_double(posinf, "nan_to_num_"),
                                      optional_double(neginf, "nan_to_num_"));
        return self;
      }, py::arg("nan") = 0.0, py::arg("posinf") = py::none(), py::arg("neginf") = py::none());

  // Activations PyTorch keeps in torch._C._nn (used by nn.functional).
  py::module_ nn = nn_module(m);
  nn.def("gelu", [](py::object x, std::string approximate) { return gelu(input_tensor(x, "gelu"), approximate); },
         py::arg("input"), py::kw_only(), py::arg("approximate") = "none");
  nn.def("silu", [](py::object x) { return silu(input_tensor(x, "silu")); }, py::arg("input"));
  nn.def("silu_", [](py::object x) {
    input_tensor(x, "silu_");
    self_tensor(x).silu_();
    return x;
  }, py::arg("input"));
  nn.def("softplus", [](py::object x, py::object beta, py::object threshold) {
    return softplus(input_tensor(x, "softplus"), to_scalar(beta, "softplus").to_double(),
                    to_scalar(threshold, "softplus").to_double());
  }, py::arg("input"), py::arg("beta") = 1, py::arg("threshold") = 20);
}

}  // namespace ember::python
