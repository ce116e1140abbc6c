// Reductions: sum, mean, prod, max/min (with return_types), amax/amin,
// argmax/argmin, var/std, norm, logsumexp, all/any, cumsum.
#include <cmath>

#include <ember/core/ops/scan.h>

#include "bind.h"

namespace ember::python {

namespace {

// torch.return_types.max-like named tuples: .values, .indices and unpacking.
py::object return_type(py::module_& m, const char* name) {
  py::object types = py::hasattr(m, "return_types") ? py::object(m.attr("return_types"))
                                                     : py::object(m.def_submodule("return_types"));
  py::object cls = py::module_::import("collections").attr("namedtuple")(name, py::make_tuple("values", "indices"));
  cls.attr("__module__") = "ember.return_types";
  types.attr(name) = cls;
  return cls;
}

// None or an int (a one-element integer tensor too).
std::optional<int64_t> to_optional_dim(py::handle obj, const char* op) {
  if (obj.is_none()) return std::nullopt;
  return cast_arg<int64_t>(obj, op, "dim", "an int or None");
}

// var/std: PyTorch accepts (dim, unbiased, keepdim), (unbiased) and correction=.
double to_correction(py::handle unbiased, py::handle correction, const char* op) {
  EMBER_CHECK(unbiased.is_none() || correction.is_none(), TypeError, op,
              ": pass either unbiased or correction, not both");
  if (!correction.is_none()) return to_scalar(correction, op).to_double();
  if (unbiased.is_none()) return 1.0;
  return cast_arg<bool>(unbiased, op, "unbiased", "a bool") ? 1.0 : 0.0;
}

// p of norm: a number, or "fro" (2 over the given dims).
double to_norm_p(py::handle p) {
  if (py::isinstance<py::str>(p)) {
    const std::string s = p.cast<std::string>();
    if (s == "fro") return 2.0;
    throw NotImplementedError(str("norm: p='", s, "' is not supported; use a number or 'fro'"));
  }
  return to_scalar(p, "norm").to_double();
}

}  // namespace

void init_reduce(py::module_& m) {
  auto& cls = tensor_class();
  auto bind_dims_reduction = [&](const char* name, auto fn) {
    auto f = [fn, name](const Tensor& x, py::object dim, bool keepdim, py::object dtype) {
      return fn(x, to_dims(dim, name), keepdim, to_optional_dtype(dtype));
    };
    m.def(name, f, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
          py::arg("dtype") = py::none());
    cls.def(name, f, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
            py::arg("dtype") = py::none());
  };
  bind_dims_reduction("sum", [](const Tensor& x, const Dims& d, bool k, std::optional<DType> dt) { return sum(x, d, k, dt); });
  bind_dims_reduction("mean", [](const Tensor& x, const Dims& d, bool k, std::optional<DType> dt) { return mean(x, d, k, dt); });

  auto prod_f = [](const Tensor& x, py::object dim, bool keepdim, py::object dtype) {
    return prod(x, to_optional_dim(dim, "prod"), keepdim, to_optional_dtype(dtype));
  };
  m.def("prod", prod_f, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
        py::arg("dtype") = py::none());
  cls.def("prod", prod_f, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
          py::arg("dtype") = py::none());

  // max/min: all elements, (values, indices) along a dim, or elementwise with a tensor.
  for (bool is_max : {true, false}) {
    const char* name = is_max ? "max" : "min";
    py::object result = return_type(m, name);
    auto f = [is_max, name, result](const Tensor& x, py::object dim, bool keepdim) -> py::object {
      if (dim.is_none()) return py::cast(is_max ? max(x) : min(x));
      if (py::isinstance<Tensor>(dim)) {  // max(a, b) is maximum(a, b)
        return py::module_::import("ember").attr(is_max ? "maximum" : "minimum")(x, dim);
      }
      EMBER_CHECK(PyIndex_Check(dim.ptr()), TypeError, name, ": dim must be an int, got ", type_name(dim));
      auto [values, indices] = is_max ? max(x, dim.cast<int64_t>(), keepdim) : min(x, dim.cast<int64_t>(), keepdim);
      return result(values, indices);
    };
    m.def(name, f, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
    cls.def(name, f, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  }

  auto bind_extreme = [&](const char* name, Tensor (*fn)(const Tensor&, const Dims&, bool)) {
    auto f = [fn, name](const Tensor& x, py::object dim, bool keepdim) { return fn(x, to_dims(dim, name), keepdim); };
    m.def(name, f, py::arg("input"), py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
    cls.def(name, f, py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
  };
  bind_extreme("amax", [](const Tensor& x, const Dims& d, bool k) { return amax(x, d, k); });
  bind_extreme("amin", [](const Tensor& x, const Dims& d, bool k) { return amin(x, d, k); });
  bind_extreme("all", [](const Tensor& x, const Dims& d, bool k) { return all(x, d, k); });
  bind_extreme("any", [](const Tensor& x, const Dims& d, bool k) { return any(x, d, k); });

  auto bind_arg = [&](const char* name, bool is_max) {
    auto f = [is_max, name](const Tensor& x, py::object dim, bool keepdim) {
      return is_max ? argmax(x, to_optional_dim(dim, name), keepdim) : argmin(x, to_optional_dim(dim, name), keepdim);
    };
    m.def(name, f, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
    cls.def(name, f, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  };
  bind_arg("argmax", true);
  bind_arg("argmin", false);

  auto bind_var = [&](const char* name, bool take_sqrt) {
    auto f = [name, take_sqrt](const Tensor& x, py::object dim, py::object unbiased, bool keepdim, py::object correction) {
      if (py::isinstance<py::bool_>(dim)) {  // x.var(False): the unbiased flag in dim's place
        EMBER_CHECK(unbiased.is_none(), TypeError, name, ": unbiased given twice");
        unbiased = dim;
        dim = py::none();
      }
      const double c = to_correction(unbiased, correction, name);
      const Dims dims = to_dims(dim, name);
      return take_sqrt ? std_dev(x, dims, c, keepdim) : var(x, dims, c, keepdim);
    };
    m.def(name, f, py::arg("input"), py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
          py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none());
    cls.def(name, f, py::arg("dim") = py::none(), py::arg("unbiased") = py::none(), py::arg("keepdim") = false,
            py::kw_only(), py::arg("correction") = py::none());
  };
  bind_var("var", false);
  bind_var("std", true);

  auto norm_f = [](const Tensor& x, py::object p, py::object dim, bool keepdim, py::object dtype) {
    return norm(x, to_norm_p(p), to_dims(dim, "norm"), keepdim, to_optional_dtype(dtype));
  };
  m.def("norm", norm_f, py::arg("input"), py::arg("p") = "fro", py::arg("dim") = py::none(),
        py::arg("keepdim") = false, py::arg("dtype") = py::none());
  cls.def("norm", norm_f, py::arg("p") = "fro", py::arg("dim") = py::none(), py::arg("keepdim") = false,
          py::arg("dtype") = py::none());

  auto lse_f = [](const Tensor& x, py::object dim, bool keepdim) {
    return logsumexp(x, to_dims(dim, "logsumexp"), keepdim);
  };
  m.def("logsumexp", lse_f, py::arg("input"), py::arg("dim"), py::arg("keepdim") = false);
  cls.def("logsumexp", lse_f, py::arg("dim"), py::arg("keepdim") = false);

  auto cumsum_f = [](const Tensor& x, int64_t dim, py::object dtype) { return cumsum(x, dim, to_optional_dtype(dtype)); };
  m.def("cumsum", cumsum_f, py::arg("input"), py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  cls.def("cumsum", cumsum_f, py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());

  // The other running reductions (core/ops/scan.h).
  auto cumprod_f = [](const Tensor& x, int64_t dim, py::object dtype) { return cumprod(x, dim, to_optional_dtype(dtype)); };
  m.def("cumprod", cumprod_f, py::arg("input"), py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  cls.def("cumprod", cumprod_f, py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  m.def("logcumsumexp", &ember::logcumsumexp, py::arg("input"), py::arg("dim"));
  cls.def("logcumsumexp", &ember::logcumsumexp, py::arg("dim"));
  for (const bool is_max : {true, false}) {
    const char* name = is_max ? "cummax" : "cummin";
    py::object type = return_type(m, name);
    auto f = [type, is_max](const Tensor& x, int64_t dim) {
      auto [values, indices] = is_max ? cummax(x, dim) : cummin(x, dim);
      return type(values, indices);
    };
    m.def(name, f, py::arg("input"), py::arg("dim"));
    cls.def(name, f, py::arg("dim"));
  }
}

}  // namespace ember::python
