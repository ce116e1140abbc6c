// The sort family: sort, argsort, topk, msort as functions and Tensor methods,
// with torch's signatures; sort and topk return torch.return_types-like
// named tuples (.values, .indices).
#include "bind.h"

namespace ember::python {

namespace {

// ember.return_types.<name>: a (values, indices) named tuple class.
py::object values_indices_type(py::module_& m, const char* name) {
  py::object types = py::hasattr(m, "return_types") ? py::object(m.attr("return_types"))
                                                     : py::object(m.def_submodule("return_types"));
  py::object cls = py::module_::import("collections").attr("namedtuple")(name, py::make_tuple("values", "indices"));
  cls.attr("__module__") = "ember.return_types";
  types.attr(name) = cls;
  return cls;
}

}  // namespace

void init_sort(py::module_& m) {
  auto& cls = tensor_class();
  // The binary search under ember.searchsorted / bucketize (python/ember/_sorting_extra.py).
  m.def("_searchsorted", &searchsorted, py::arg("sorted_sequence"), py::arg("values"), py::arg("right") = false);

  py::object sort_result = values_indices_type(m, "sort");
  auto sort_f = [sort_result](const Tensor& x, int64_t dim, bool descending, bool stable) {
    auto [values, indices] = sort(x, dim, descending, stable);
    return sort_result(values, indices);
  };
  m.def("sort", sort_f, py::arg("input"), py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
        py::arg("stable") = false);
  cls.def("sort", sort_f, py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
          py::arg("stable") = false);

  auto argsort_f = [](const Tensor& x, int64_t dim, bool descending, bool stable) {
    return argsort(x, dim, descending, stable);
  };
  m.def("argsort", argsort_f, py::arg("input"), py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
        py::arg("stable") = false);
  cls.def("argsort", argsort_f, py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
          py::arg("stable") = false);

  py::object topk_result = values_indices_type(m, "topk");
  auto topk_f = [topk_result](const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
    auto [values, indices] = topk(x, k, dim, largest, sorted);
    return topk_result(values, indices);
  };
  m.def("topk", topk_f, py::arg("input"), py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true,
        py::arg("sorted") = true);
  cls.def("topk", topk_f, py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true, py::arg("sorted") = true);

  m.def("msort", [](const Tensor& x) { return msort(x); }, py::arg("input"));
  cls.def("msort", [](const Tensor& x) { return msort(x); });
}

}  // namespace ember::python
