// Ops composed of other ember ops (core/ops/composite_*.h), bound with
// PyTorch's names, argument names, defaults and keyword-only markers, plus
// their Tensor methods (as lambdas: core/tensor.h stays as it is).
#include "bind.h"
#include "default_device.h"

namespace ember::python {

namespace {

py::tuple as_tuple(const std::vector<Tensor>& ts) { return py::cast(ts); }

// f(a, b), f([a, b]) and f((a, b)) all give {a, b}.
std::vector<Tensor> tensors_of(const py::tuple& args, const char* op) {
  py::sequence seq = args;
  if (args.size() == 1 && !py::isinstance<Tensor>(args[0])) {
    EMBER_CHECK(py::isinstance<py::sequence>(args[0]), TypeError, op,
                ": expected Tensors or one sequence of Tensors, got ", type_name(args[0]));
    seq = args[0].cast<py::sequence>();
  }
  std::vector<Tensor> out;
  for (py::handle h : seq) {
    EMBER_CHECK(py::isinstance<Tensor>(h), TypeError, op, ": expected Tensors, but element ", out.size(), " is ",
                type_name(h));
    out.push_back(h.cast<Tensor>());
  }
  return out;
}

// A sequence of tensors given as one argument (hstack(tensors), not hstack(*tensors)).
std::vector<Tensor> tensor_sequence(py::handle seq, const char* op) {
  EMBER_CHECK(py::isinstance<py::sequence>(seq) && !py::isinstance<Tensor>(seq), TypeError, op,
              ": argument 'tensors' must be a tuple or list of Tensors, not ", type_name(seq));
  return tensors_of(py::make_tuple(seq), op);
}

// torch.return_types.<name>(first, second)-like named tuples in ember.return_types.
py::object pair_type(py::module_& m, const char* name, const char* first, const char* second) {
  py::object types = py::hasattr(m, "return_types") ? py::object(m.attr("return_types"))
                                                     : py::object(m.def_submodule("return_types"));
  py::object cls = py::module_::import("collections").attr("namedtuple")(name, py::make_tuple(first, second));
  cls.attr("__module__") = "ember.return_types";
  types.attr(name) = cls;
  return cls;
}

// None or an int (a one-element integer tensor too).
std::optional<int64_t> optional_int(py::handle obj, const char* op, const char* arg) {
  if (obj.is_none()) return std::nullopt;
  return cast_arg<int64_t>(obj, op, arg, "an int or None");
}

// var_mean/std_mean: (dim, unbiased, keepdim), (unbiased) or correction=, as var/std.
double correction_of(py::object& dim, py::handle unbiased_in, py::handle correction, const char* op) {
  py::object unbiased = py::reinterpret_borrow<py::object>(unbiased_in);
  if (py::isinstance<py::bool_>(dim)) {  // var_mean(x, False): the unbiased flag in dim's place
    EMBER_CHECK(unbiased.is_none(), TypeError, op, ": unbiased given twice");
    unbiased = dim;
    dim = py::none();
  }
  EMBER_CHECK(unbiased.is_none() || correction.is_none(), TypeError, op,
              ": pass either unbiased or correction, not both");
  if (!correction.is_none()) return to_scalar(correction, op).to_double();
  if (unbiased.is_none()) return 1.0;
  return cast_arg<bool>(unbiased, op, "unbiased", "a bool") ? 1.0 : 0.0;
}

Tensor repeat_interleave_any(const Tensor& x, py::handle repeats, py::handle dim, py::handle output_size) {
  const char* op = "repeat_interleave";
  if (repeats.is_none()) {  // repeat_interleave(repeats): the index form
    EMBER_CHECK(dim.is_none(), TypeError, "repeat_interleave: dim given without repeats");
    return repeat_interleave(x, optional_int(output_size, op, "output_size"));
  }
  if (py::isinstance<Tensor>(repeats)) {
    return repeat_interleave(x, repeats.cast<Tensor>(), optional_int(dim, op, "dim"),
                             optional_int(output_size, op, "output_size"));
  }
  EMBER_CHECK(PyIndex_Check(repeats.ptr()), TypeError, "repeat_interleave: repeats must be an int or a Tensor, got ",
              type_name(repeats));
  return repeat_interleave(x, repeats.cast<int64_t>(), optional_int(dim, op, "dim"),
                           optional_int(output_size, op, "output_size"));
}

py::tuple tensor_split_any(const Tensor& x, py::handle how, int64_t dim) {
  if (py::isinstance<Tensor>(how)) {  // 0-d: sections; 1-d: indices (int64, on the CPU, as PyTorch)
    const Tensor t = how.cast<Tensor>();
    EMBER_CHECK(t.dtype() == DType::Int64 && t.device().is_cpu(), Error,
                "tensor_split: tensor_indices_or_sections must be an int64 tensor on the CPU, got ",
                dtype_name(t.dtype()), " on ", t.device().str());
    EMBER_CHECK(t.dim() <= 1, Error, "tensor_split: tensor_indices_or_sections must be a 0-D or 1-D tensor, got shape ",
                t.shape_str());
    if (t.dim() == 0) return as_tuple(tensor_split(x, t.item().to_int(), dim));
    return as_tuple(tensor_split(x, to_int_list(how, "tensor_split"), dim));
  }
  if (PyIndex_Check(how.ptr())) return as_tuple(tensor_split(x, how.cast<int64_t>(), dim));
  return as_tuple(tensor_split(x, to_int_list(how, "tensor_split"), dim));
}

Tensor tensordot_any(const Tensor& a, const Tensor& b, py::handle dims) {
  if (PyIndex_Check(dims.ptr()) && !py::isinstance<Tensor>(dims)) return tensordot(a, b, dims.cast<int64_t>());
  if (py::isinstance<Tensor>(dims)) {
    const Tensor t = dims.cast<Tensor>().cpu();
    if (t.dim() == 0) return tensordot(a, b, t.item().to_int());
    EMBER_CHECK(t.dim() == 2 && t.size(0) == 2, Error, "tensordot: a dims tensor must be 0-D or of shape [2, n], got ",
                t.shape_str());
    return tensordot(a, b, to_int_list(py::cast(t.select(0, 0)), "tensordot"),
                     to_int_list(py::cast(t.select(0, 1)), "tensordot"));
  }
  EMBER_CHECK(py::isinstance<py::sequence>(dims) && py::len(dims) == 2, TypeError,
              "tensordot: dims must be an int or a pair of dim lists, got ", type_name(dims));
  py::sequence pair = dims.cast<py::sequence>();
  return tensordot(a, b, to_int_list(pair[0], "tensordot"), to_int_list(pair[1], "tensordot"));
}

double number(py::handle obj, const char* op) { return to_scalar(obj, op).to_double(); }

// atleast_*d(x) gives a tensor; atleast_*d(a, b) and atleast_*d([a, b]) a tuple.
template <Tensor (*F)(const Tensor&)>
py::object atleast(const py::args& args, const char* op) {
  if (args.size() == 1 && py::isinstance<Tensor>(args[0])) return py::cast(F(args[0].cast<Tensor>()));
  std::vector<Tensor> out;
  for (const Tensor& t : tensors_of(args, op)) out.push_back(F(t));
  return as_tuple(out);
}

void bind_shape(py::module_& m, TensorClass& cls) {
  auto movedim_f = [](const Tensor& x, py::handle source, py::handle destination) {
    return movedim(x, to_int_list(source, "movedim"), to_int_list(destination, "movedim"));
  };
  for (const char* name : {"movedim", "moveaxis"}) {
    m.def(name, movedim_f, py::arg("input"), py::arg("source"), py::arg("destination"));
    cls.def(name, movedim_f, py::arg("source"), py::arg("destination"));
  }
  m.def("tile", [](const Tensor& x, py::handle dims) { return tile(x, to_int_list(dims, "tile")); },
        py::arg("input"), py::arg("dims"));
  cls.def("tile", [](const Tensor& x, py::args dims) { return tile(x, shape_from_args(dims, "tile")); });
  m.def("meshgrid", [](py::args tensors, py::object indexing) {
    EMBER_CHECK(indexing.is_none() || py::isinstance<py::str>(indexing), TypeError,
                "meshgrid: indexing must be 'ij' or 'xy', got ", type_name(indexing));
    const std::string how = indexing.is_none() ? "ij" : indexing.cast<std::string>();
    return as_tuple(meshgrid(tensors_of(tensors, "meshgrid"), how));
  }, py::kw_only(), py::arg("indexing") = py::none());
  m.def("broadcast_tensors", [](py::args tensors) {
    return as_tuple(broadcast_tensors(tensors_of(tensors, "broadcast_tensors")));
  });
  m.def("repeat_interleave", &repeat_interleave_any, py::arg("input"), py::arg("repeats") = py::none(),
        py::arg("dim") = py::none(), py::kw_only(), py::arg("output_size") = py::none());
  cls.def("repeat_interleave", &repeat_interleave_any, py::arg("repeats") = py::none(), py::arg("dim") = py::none(),
          py::kw_only(), py::arg("output_size") = py::none());
  m.def("tensor_split", &tensor_split_any, py::arg("input"), py::arg("indices_or_sections"), py::arg("dim") = 0);
  cls.def("tensor_split", &tensor_split_any, py::arg("indices_or_sections"), py::arg("dim") = 0);
  using Sections = std::vector<Tensor> (*)(const Tensor&, int64_t);
  using Indices = std::vector<Tensor> (*)(const Tensor&, const std::vector<int64_t>&);
  const std::tuple<const char*, Sections, Indices> splits[] = {
      {"hsplit", hsplit, hsplit}, {"vsplit", vsplit, vsplit}, {"dsplit", dsplit, dsplit}};
  for (const auto& [name, by_sections, by_indices] : splits) {
    auto f = [name = name, by_sections = by_sections, by_indices = by_indices](const Tensor& x, py::handle how) {
      if (PyIndex_Check(how.ptr()) && !py::isinstance<Tensor>(how)) return as_tuple(by_sections(x, how.cast<int64_t>()));
      return as_tuple(by_indices(x, to_int_list(how, name)));
    };
    m.def(name, f, py::arg("input"), py::arg("indices_or_sections"));
    cls.def(name, f, py::arg("indices_or_sections"));
  }
  m.def("atleast_1d", [](py::args a) { return atleast<atleast_1d>(a, "atleast_1d"); });
  m.def("atleast_2d", [](py::args a) { return atleast<atleast_2d>(a, "atleast_2d"); });
  m.def("atleast_3d", [](py::args a) { return atleast<atleast_3d>(a, "atleast_3d"); });
  using Join = Tensor (*)(const std::vector<Tensor>&);
  const std::pair<const char*, Join> joins[] = {{"hstack", hstack}, {"vstack", vstack}, {"row_stack", vstack},
                                                {"dstack", dstack}, {"column_stack", column_stack}};
  for (const auto& [name, fn] : joins) {
    m.def(name, [name = name, fn = fn](py::handle ts) { return fn(tensor_sequence(ts, name)); }, py::arg("tensors"));
  }
  m.def("cartesian_prod", [](py::args ts) { return cartesian_prod(tensors_of(ts, "cartesian_prod")); });
  m.def("block_diag", [](py::args ts) { return block_diag(tensors_of(ts, "block_diag")); });
  auto rot90_f = [](const Tensor& x, int64_t k, py::handle dims) { return rot90(x, k, to_int_list(dims, "rot90")); };
  m.def("rot90", rot90_f, py::arg("input"), py::arg("k") = 1, py::arg("dims") = py::make_tuple(0, 1));
  cls.def("rot90", rot90_f, py::arg("k") = 1, py::arg("dims") = py::make_tuple(0, 1));
  for (const auto& [name, fn] : {std::pair{"fliplr", &fliplr}, std::pair{"flipud", &flipud}}) {
    m.def(name, fn, py::arg("input"));
    cls.def(name, fn);
  }
  auto diff_f = [](const Tensor& x, int64_t n, int64_t dim, std::optional<Tensor> prepend,
                   std::optional<Tensor> append) {
    return diff(x, n, dim, prepend.value_or(Tensor()), append.value_or(Tensor()));
  };
  m.def("diff", diff_f, py::arg("input"), py::arg("n") = 1, py::arg("dim") = -1, py::arg("prepend") = py::none(),
        py::arg("append") = py::none());
  cls.def("diff", diff_f, py::arg("n") = 1, py::arg("dim") = -1, py::arg("prepend") = py::none(),
          py::arg("append") = py::none());
}

void bind_reduce(py::module_& m, TensorClass& cls) {
  m.def("numel", [](const Tensor& x) { return x.numel(); }, py::arg("input"));
  auto count_f = [](const Tensor& x, py::handle dim) { return count_nonzero(x, to_dims(dim, "count_nonzero")); };
  m.def("count_nonzero", count_f, py::arg("input"), py::arg("dim") = py::none());
  cls.def("count_nonzero", count_f, py::arg("dim") = py::none());
  for (bool is_std : {true, false}) {
    const char* name = is_std ? "std_mean" : "var_mean";
    m.def(name, [name, is_std](const Tensor& x, py::object dim, py::object unbiased, bool keepdim,
                               py::object correction) {
      const double c = correction_of(dim, unbiased, correction, name);
      const Dims dims = to_dims(dim, name);
      return is_std ? std_mean(x, dims, c, keepdim) : var_mean(x, dims, c, keepdim);
    }, py::arg("input"), py::arg("dim") = py::none(), py::arg("unbiased") = py::none(), py::arg("keepdim") = false,
       py::kw_only(), py::arg("correction") = py::none());
  }
  py::object aminmax_t = pair_type(m, "aminmax", "min", "max");
  auto aminmax_f = [aminmax_t](const Tensor& x, py::handle dim, bool keepdim) {
    auto [lo, hi] = aminmax(x, optional_int(dim, "aminmax", "dim"), keepdim);
    return aminmax_t(lo, hi);
  };
  m.def("aminmax", aminmax_f, py::arg("input"), py::kw_only(), py::arg("dim") = py::none(),
        py::arg("keepdim") = false);
  cls.def("aminmax", aminmax_f, py::kw_only(), py::arg("dim") = py::none(), py::arg("keepdim") = false);
}

void bind_pointwise(py::module_& m, TensorClass& cls) {
  using Fused = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const Scalar&);
  using FusedInplace = Tensor& (*)(Tensor&, const Tensor&, const Tensor&, const Scalar&);
  const std::tuple<const char*, Fused, const char*, FusedInplace> fused[] = {
      {"addcmul", addcmul, "addcmul_", addcmul_}, {"addcdiv", addcdiv, "addcdiv_", addcdiv_}};
  for (const auto& [name, fn, inplace_name, inplace] : fused) {
    auto f = [name = name, fn = fn](const Tensor& x, py::handle t1, py::handle t2, py::handle value) {
      return fn(x, to_tensor_arg(t1, name), to_tensor_arg(t2, name), to_scalar(value, name));
    };
    m.def(name, f, py::arg("input"), py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
    cls.def(name, f, py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
    cls.def(inplace_name, [name = inplace_name, inplace = inplace](Tensor& x, py::handle t1, py::handle t2,
                                                                   py::handle value) -> Tensor& {
      return inplace(x, to_tensor_arg(t1, name), to_tensor_arg(t2, name), to_scalar(value, name));
    }, py::arg("tensor1"), py::arg("tensor2"), py::kw_only(), py::arg("value") = 1);
  }
  auto logit_f = [](const Tensor& x, std::optional<double> eps) { return logit(x, eps); };
  cls.def("logit_", [](Tensor& x, std::optional<double> eps) -> Tensor& { return logit_(x, eps); },
          py::arg("eps") = py::none());
  m.def("logit", logit_f, py::arg("input"), py::arg("eps") = py::none());
  cls.def("logit", logit_f, py::arg("eps") = py::none());
  auto cross_f = [](const Tensor& a, const Tensor& b, std::optional<int64_t> dim) { return cross(a, b, dim); };
  m.def("cross", cross_f, py::arg("input"), py::arg("other"), py::arg("dim") = py::none());
  cls.def("cross", cross_f, py::arg("other"), py::arg("dim") = py::none());
  // ember.linalg.cross (python/ember/linalg.py) comes from here.
  py::module_ linalg = py::hasattr(m, "_linalg") ? m.attr("_linalg").cast<py::module_>()
                                                   : m.def_submodule("_linalg", "kernels behind ember.linalg");
  linalg.def("cross", [](const Tensor& a, const Tensor& b, int64_t dim) { return linalg_cross(a, b, dim); },
             py::arg("input"), py::arg("other"), py::kw_only(), py::arg("dim") = -1);
  m.def("logspace", [](py::handle start, py::handle end, int64_t steps, py::handle base, py::object dtype,
                       py::object layout, py::object device, bool requires_grad) {
    (void)layout;  // strided only, as every ember tensor
    Tensor t = logspace(number(start, "logspace"), number(end, "logspace"), steps, number(base, "logspace"),
                        to_optional_dtype(dtype), factory_device(device));
    if (requires_grad) t.requires_grad_(true);
    return t;
  }, py::arg("start"), py::arg("end"), py::arg("steps"), py::arg("base") = 10.0, py::kw_only(),
     py::arg("dtype") = py::none(), py::arg("layout") = py::none(), py::arg("device") = py::none(),
     py::arg("requires_grad") = false);
}

void bind_products(py::module_& m, TensorClass& cls) {
  using Batched = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&);
  const std::pair<const char*, Batched> batched[] = {{"baddbmm", baddbmm}, {"addbmm", addbmm}};
  for (const auto& [name, fn] : batched) {
    auto f = [name = name, fn = fn](const Tensor& x, const Tensor& b1, const Tensor& b2, py::handle beta,
                                    py::handle alpha) {
      return fn(x, b1, b2, to_scalar(beta, name), to_scalar(alpha, name));
    };
    m.def(name, f, py::arg("input"), py::arg("batch1"), py::arg("batch2"), py::kw_only(), py::arg("beta") = 1,
          py::arg("alpha") = 1);
    cls.def(name, f, py::arg("batch1"), py::arg("batch2"), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);
  }
  using BatchedInplace = Tensor& (*)(Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&);
  const std::pair<const char*, BatchedInplace> batched_inplace[] = {{"baddbmm_", baddbmm_}, {"addbmm_", addbmm_}};
  for (const auto& [name, fn] : batched_inplace) {
    cls.def(name, [name = name, fn = fn](Tensor& x, const Tensor& b1, const Tensor& b2, py::handle beta,
                                         py::handle alpha) -> Tensor& {
      return fn(x, b1, b2, to_scalar(beta, name), to_scalar(alpha, name));
    }, py::arg("batch1"), py::arg("batch2"), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);
  }
  using Vector = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&);
  using VectorInplace = Tensor& (*)(Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&);
  const std::tuple<const char*, const char*, const char*, Vector, VectorInplace> vector_products[] = {
      {"addmv", "mat", "vec", addmv, addmv_}, {"addr", "vec1", "vec2", addr, addr_}};
  for (const auto& [name, first, second, fn, inplace] : vector_products) {
    auto f = [name = name, fn = fn](const Tensor& x, const Tensor& a, const Tensor& b, py::handle beta,
                                    py::handle alpha) {
      return fn(x, a, b, to_scalar(beta, name), to_scalar(alpha, name));
    };
    m.def(name, f, py::arg("input"), py::arg(first), py::arg(second), py::kw_only(), py::arg("beta") = 1,
          py::arg("alpha") = 1);
    cls.def(name, f, py::arg(first), py::arg(second), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);
    const std::string inplace_name = std::string(name) + "_";
    cls.def(inplace_name.c_str(), [name = name, inplace = inplace](Tensor& x, const Tensor& a, const Tensor& b,
                                                                   py::handle beta, py::handle alpha) -> Tensor& {
      return inplace(x, a, b, to_scalar(beta, name), to_scalar(alpha, name));
    }, py::arg(first), py::arg(second), py::kw_only(), py::arg("beta") = 1, py::arg("alpha") = 1);
  }
  for (const auto& [name, fn] : {std::pair{"inner", &inner}, std::pair{"vdot", &vdot}}) {
    m.def(name, fn, py::arg("input"), py::arg("other"));
    cls.def(name, fn, py::arg("other"));
  }
  m.def("tensordot", &tensordot_any, py::arg("a"), py::arg("b"), py::arg("dims") = 2);
  m.def("kron", [](const Tensor& a, const Tensor& b) { return kron(a, b); }, py::arg("input"), py::arg("other"));
  cls.def("kron", [](const Tensor& a, const Tensor& b) { return kron(a, b); }, py::arg("other"));
  m.def("cdist", [](const Tensor& x1, const Tensor& x2, py::handle p, const std::string& mode) {
    return cdist(x1, x2, number(p, "cdist"), mode);
  }, py::arg("x1"), py::arg("x2"), py::arg("p") = 2.0,
     py::arg("compute_mode") = "use_mm_for_euclid_dist_if_necessary");
}

}  // namespace

void init_composites(py::module_& m) {
  auto& cls = tensor_class();
  bind_shape(m, cls);
  bind_reduce(m, cls);
  bind_pointwise(m, cls);
  bind_products(m, cls);
}

}  // namespace ember::python
