// The linalg family: ember._C._linalg (behind ember.linalg, which adds the
// norms in Python), the top-level names PyTorch keeps (ember.inverse, det,
// logdet, slogdet, pinverse, matrix_power) and their Tensor methods.
// Functions that PyTorch answers with named tuples return them here too.
#include "bind.h"

#include <ember/core/ops/linalg.h>

namespace ember::python {

namespace {

// A namedtuple class registered as ember.return_types.<name>, as torch's
// torch.return_types.linalg_qr etc.
py::object named_tuple(py::module_& m, const char* name, std::vector<const char*> fields) {
  py::object types = py::hasattr(m, "return_types") ? py::object(m.attr("return_types"))
                                                     : py::object(m.def_submodule("return_types"));
  py::tuple names(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) names[i] = py::str(fields[i]);
  py::object cls = py::module_::import("collections").attr("namedtuple")(name, names);
  cls.attr("__module__") = "ember.return_types";
  types.attr(name) = cls;
  return cls;
}

// torch.linalg.svd's driver= chooses a cuSOLVER routine; ember always uses gesvd.
void check_driver(const Tensor& A, py::handle driver, const char* op) {
  if (driver.is_none()) return;
  EMBER_CHECK(A.device().is_cuda(), Error, op,
              ": keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.");
  const std::string d = py::str(driver);
  EMBER_CHECK(d == "gesvd" || d == "gesvdj" || d == "gesvda", Error, op,
              ": driver= must be one of 'gesvd', 'gesvdj', 'gesvda', got '", d, "'");
}

std::optional<double> to_optional_double(py::handle obj, const char* op) {
  if (obj.is_none()) return std::nullopt;
  EMBER_CHECK(!py::isinstance<Tensor>(obj), NotImplementedError, op,
              ": tolerances given as tensors are not supported; pass a Python number");
  return to_scalar(obj, op).to_double();
}

}  // namespace

void init_linalg(py::module_& m) {
  py::module_ la = m.def_submodule("_linalg", "factorizations and solvers behind ember.linalg");
  py::object slogdet_t = named_tuple(m, "linalg_slogdet", {"sign", "logabsdet"});
  py::object top_slogdet_t = named_tuple(m, "slogdet", {"sign", "logabsdet"});
  py::object qr_t = named_tuple(m, "linalg_qr", {"Q", "R"});
  py::object eigh_t = named_tuple(m, "linalg_eigh", {"eigenvalues", "eigenvectors"});
  py::object svd_t = named_tuple(m, "linalg_svd", {"U", "S", "Vh"});
  py::object inv_ex_t = named_tuple(m, "linalg_inv_ex", {"inverse", "info"});
  py::object cholesky_ex_t = named_tuple(m, "linalg_cholesky_ex", {"L", "info"});
  py::object lu_factor_t = named_tuple(m, "linalg_lu_factor", {"LU", "pivots"});
  py::object lu_factor_ex_t = named_tuple(m, "linalg_lu_factor_ex", {"LU", "pivots", "info"});
  py::object lu_t = named_tuple(m, "linalg_lu", {"P", "L", "U"});

  la.def("inv", &linalg::inv, py::arg("A"));
  la.def("solve", &linalg::solve, py::arg("A"), py::arg("B"), py::kw_only(), py::arg("left") = true);
  la.def("solve_triangular", &linalg::solve_triangular, py::arg("A"), py::arg("B"), py::kw_only(), py::arg("upper"),
         py::arg("left") = true, py::arg("unitriangular") = false);
  la.def("inv_ex", [inv_ex_t](const Tensor& A, bool check_errors) {
    auto [inverse, info] = linalg::inv_ex(A, check_errors);
    return inv_ex_t(inverse, info);
  }, py::arg("A"), py::kw_only(), py::arg("check_errors") = false);
  la.def("cholesky_ex", [cholesky_ex_t](const Tensor& A, bool upper, bool check_errors) {
    auto [L, info] = linalg::cholesky_ex(A, upper, check_errors);
    return cholesky_ex_t(L, info);
  }, py::arg("A"), py::kw_only(), py::arg("upper") = false, py::arg("check_errors") = false);
  la.def("lu_factor", [lu_factor_t](const Tensor& A, bool pivot) {
    auto [LU, pivots] = linalg::lu_factor(A, pivot);
    return lu_factor_t(LU, pivots);
  }, py::arg("A"), py::kw_only(), py::arg("pivot") = true);
  la.def("lu_factor_ex", [lu_factor_ex_t](const Tensor& A, bool pivot, bool check_errors) {
    auto [LU, pivots, info] = linalg::lu_factor_ex(A, pivot, check_errors);
    return lu_factor_ex_t(LU, pivots, info);
  }, py::arg("A"), py::kw_only(), py::arg("pivot") = true, py::arg("check_errors") = false);
  la.def("lu", [lu_t](const Tensor& A, bool pivot) {
    auto [P, L, U] = linalg::lu(A, pivot);
    return lu_t(P, L, U);
  }, py::arg("A"), py::kw_only(), py::arg("pivot") = true);
  la.def("lu_solve", &linalg::lu_solve, py::arg("LU"), py::arg("pivots"), py::arg("B"), py::kw_only(),
         py::arg("left") = true, py::arg("adjoint") = false);
  la.def("det", &linalg::det, py::arg("A"));
  la.def("slogdet", [slogdet_t](const Tensor& A) {
    auto [sign, logabsdet] = linalg::slogdet(A);
    return slogdet_t(sign, logabsdet);
  }, py::arg("A"));
  la.def("cholesky", &linalg::cholesky, py::arg("A"), py::kw_only(), py::arg("upper") = false);
  la.def("qr", [qr_t](const Tensor& A, const std::string& mode) {
    auto [Q, R] = linalg::qr(A, mode);
    return qr_t(Q, R);
  }, py::arg("A"), py::arg("mode") = "reduced");
  la.def("eigh", [eigh_t](const Tensor& A, const std::string& UPLO) {
    auto [w, V] = linalg::eigh(A, UPLO);
    return eigh_t(w, V);
  }, py::arg("A"), py::arg("UPLO") = "L");
  la.def("eigvalsh", &linalg::eigvalsh, py::arg("A"), py::arg("UPLO") = "L");
  la.def("svd", [svd_t](const Tensor& A, bool full_matrices, py::object driver) {
    check_driver(A, driver, "linalg.svd");
    auto [U, S, Vh] = linalg::svd(A, full_matrices);
    return svd_t(U, S, Vh);
  }, py::arg("A"), py::arg("full_matrices") = true, py::kw_only(), py::arg("driver") = py::none());
  la.def("svdvals", [](const Tensor& A, py::object driver) {
    check_driver(A, driver, "linalg.svdvals");
    return linalg::svdvals(A);
  }, py::arg("A"), py::kw_only(), py::arg("driver") = py::none());
  la.def("pinv", [](const Tensor& A, py::object atol, py::object rtol, bool hermitian) {
    return linalg::pinv(A, to_optional_double(atol, "linalg.pinv"), to_optional_double(rtol, "linalg.pinv"), hermitian);
  }, py::arg("A"), py::kw_only(), py::arg("atol") = py::none(), py::arg("rtol") = py::none(),
     py::arg("hermitian") = false);
  la.def("matrix_power", &linalg::matrix_power, py::arg("A"), py::arg("n"));

  // Top-level names and Tensor methods.
  auto& cls = tensor_class();
  auto slogdet_f = [top_slogdet_t](const Tensor& A) {
    auto [sign, logabsdet] = ember::slogdet(A);
    return top_slogdet_t(sign, logabsdet);
  };
  m.def("inverse", &ember::inverse, py::arg("input"));
  m.def("det", &ember::det, py::arg("input"));
  m.def("logdet", &ember::logdet, py::arg("input"));
  m.def("slogdet", slogdet_f, py::arg("input"));
  m.def("pinverse", &ember::pinverse, py::arg("input"), py::arg("rcond") = 1e-15, py::arg("hermitian") = false);
  m.def("matrix_power", &ember::matrix_power, py::arg("input"), py::arg("n"));
  m.def("cholesky_solve", &ember::cholesky_solve, py::arg("B"), py::arg("L"), py::arg("upper") = false);
  m.def("cholesky_inverse", &ember::cholesky_inverse, py::arg("L"), py::arg("upper") = false);
  cls.def("cholesky_solve", [](const Tensor& B, const Tensor& L, bool upper) { return ember::cholesky_solve(B, L, upper); },
          py::arg("input2"), py::arg("upper") = false);
  cls.def("cholesky_inverse", [](const Tensor& L, bool upper) { return ember::cholesky_inverse(L, upper); },
          py::arg("upper") = false);
  cls.def("inverse", [](const Tensor& A) { return ember::inverse(A); });
  cls.def("det", [](const Tensor& A) { return ember::det(A); });
  cls.def("logdet", [](const Tensor& A) { return ember::logdet(A); });
  cls.def("slogdet", slogdet_f);
  cls.def("pinverse", [](const Tensor& A, double rcond, bool hermitian) { return ember::pinverse(A, rcond, hermitian); },
          py::arg("rcond") = 1e-15, py::arg("hermitian") = false);
  cls.def("matrix_power", [](const Tensor& A, int64_t n) { return ember::matrix_power(A, n); }, py::arg("n"));
}

}  // namespace ember::python
