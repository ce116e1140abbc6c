// Matmul-family composites (core/ops/composite_matmul.h).
#include <ember/core/ops/composite_matmul.h>

#include <algorithm>

#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/complex.h>
#include <ember/core/ops/composite_detail.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/unary.h>
#include <ember/core/type_promotion.h>

namespace ember {

using composite::as_op;

namespace {

void check_batches(const char* op, const Tensor& input, const Tensor& b1, const Tensor& b2) {
  EMBER_CHECK(input.defined() && b1.defined() && b2.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(b1.dim() == 3 && b2.dim() == 3, Error, op, ": batch1 and batch2 must be 3-D tensors, got shapes ",
              b1.shape_str(), " and ", b2.shape_str());
  EMBER_CHECK(b1.size(0) == b2.size(0) && b1.size(2) == b2.size(1), Error, op,
              ": expected batch2 to have size [", b1.size(0), ", ", b1.size(2), ", *] to match batch1 of shape ",
              b1.shape_str(), ", but got ", b2.shape_str());
}

// beta * input + alpha * product, input broadcast to the product's shape.
// Integer results cast beta and alpha to integers first, as PyTorch's kernels.
Tensor scaled_sum(const char* op, const Tensor& input, const Tensor& product, Scalar beta, Scalar alpha) {
  bool fits = input.dim() <= product.dim();
  for (int64_t k = 1; fits && k <= input.dim(); ++k) {
    fits = input.size(-k) == 1 || input.size(-k) == product.size(-k);
  }
  EMBER_CHECK(fits, Error, op, ": input of shape ", input.shape_str(), " cannot be broadcast to the product's shape ",
              product.shape_str());
  const DType dt = result_type(input, product);
  if (is_integral(dt, true)) {
    beta = beta.is_floating() ? Scalar(beta.to_int()) : beta;
    alpha = alpha.is_floating() ? Scalar(alpha.to_int()) : alpha;
  }
  return as_op(op, [&] {
    Tensor out = alpha.to_double() == 1 ? product : mul(product, scalar_tensor(alpha));
    if (beta.to_double() != 0) out = add(beta.to_double() == 1 ? input : mul(input, scalar_tensor(beta)), out);
    return out.dtype() == dt ? out : out.to(dt);
  });
}

Shape sizes_of(const Tensor& t, const Dims& dims) {
  Shape s;
  for (int64_t d : dims) s.push_back(t.size(d));
  return s;
}

}  // namespace

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  check_batches("baddbmm", input, batch1, batch2);
  const Tensor product = as_op("baddbmm", [&] { return bmm(batch1, batch2); });
  return scaled_sum("baddbmm", input, product, beta, alpha);
}

Tensor addbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
              const Scalar& alpha) {
  check_batches("addbmm", input, batch1, batch2);
  const int64_t b = batch1.size(0), n = batch1.size(1), k = batch1.size(2), p = batch2.size(2);
  // sum_b batch1[b] @ batch2[b] = [n, b*k] @ [b*k, p]: one product over the joined batch.
  const Tensor product =
      as_op("addbmm", [&] { return mm(reshape(permute(batch1, {1, 0, 2}), {n, b * k}), reshape(batch2, {b * k, p})); });
  return scaled_sum("addbmm", input, product, beta, alpha);
}

namespace {

// Under autograd the graph reads a copy: self's old values are saved, and self is overwritten.
Tensor saved_copy(const Tensor& self) { return autograd::any_requires_grad({self}) ? self.clone() : self; }

Tensor& assign_product(const char* op, Tensor& self, const Tensor& result) {
  EMBER_CHECK(result.shape() == self.shape(), Error, op, ": output with shape ", self.shape_str(),
              " doesn't match the broadcast shape ", result.shape_str());
  return assign_inplace(self, result);
}

}  // namespace

Tensor& baddbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  check_batches("baddbmm_", self, batch1, batch2);
  autograd::check_inplace(self, "baddbmm_");
  return assign_product("baddbmm_", self, baddbmm(saved_copy(self), batch1, batch2, beta, alpha));
}

Tensor& addbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  check_batches("addbmm_", self, batch1, batch2);
  autograd::check_inplace(self, "addbmm_");
  return assign_product("addbmm_", self, addbmm(saved_copy(self), batch1, batch2, beta, alpha));
}

namespace {

void check_addmv(const char* op, const Tensor& input, const Tensor& mat, const Tensor& vec) {
  EMBER_CHECK(input.defined() && mat.defined() && vec.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0), Error, op,
              ": size mismatch, got input (", input.shape_str(), "), mat (", mat.shape_str(), "), vec (",
              vec.shape_str(), ")");
}

void check_addr(const char* op, const Tensor& input, const Tensor& vec1, const Tensor& vec2) {
  EMBER_CHECK(input.defined() && vec1.defined() && vec2.defined(), ValueError, op, ": got an undefined tensor");
  EMBER_CHECK(vec1.dim() == 1, Error, op, ": expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  EMBER_CHECK(vec2.dim() == 1, Error, op, ": expected 1-D argument vec2, but got ", vec2.dim(), "-D");
}

}  // namespace

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  check_addmv("addmv", input, mat, vec);
  const Tensor product = as_op("addmv", [&] { return mv(mat, vec); });
  return scaled_sum("addmv", input, product, beta, alpha);
}

Tensor& addmv_(Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  check_addmv("addmv_", self, mat, vec);
  autograd::check_inplace(self, "addmv_");
  return assign_product("addmv_", self, addmv(saved_copy(self), mat, vec, beta, alpha));
}

Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  check_addr("addr", input, vec1, vec2);
  const Tensor product = as_op("addr", [&] { return outer(vec1, vec2); });
  return scaled_sum("addr", input, product, beta, alpha);
}

Tensor& addr_(Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  check_addr("addr_", self, vec1, vec2);
  autograd::check_inplace(self, "addr_");
  return assign_product("addr_", self, addr(saved_copy(self), vec1, vec2, beta, alpha));
}

Tensor inner(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, "inner: got an undefined tensor");
  if (a.dim() == 0 || b.dim() == 0) return as_op("inner", [&] { return mul(a, b); });
  EMBER_CHECK(a.size(-1) == b.size(-1), Error, "inner: the last dimension must match on both input tensors but got "
              "shapes ", a.shape_str(), " and ", b.shape_str());
  return as_op("inner", [&] { return tensordot(a, b, {-1}, {-1}); });
}

Tensor vdot(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, "vdot: got an undefined tensor");
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, Error, "vdot: 1D tensors expected, but got ", a.dim(), "D and ", b.dim(),
              "D tensors");
  return as_op("vdot", [&] { return dot(conj(a), b); });  // conjugates the first argument, as numpy
}

Tensor tensordot(const Tensor& a, const Tensor& b, const Dims& dims_a, const Dims& dims_b) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, "tensordot: got an undefined tensor");
  EMBER_CHECK(dims_a.size() == dims_b.size(), Error, "tensordot: both dimension lists should have same length, got ",
              shape_str(dims_a), " and ", shape_str(dims_b));
  EMBER_CHECK(a.dtype() == b.dtype(), Error, "tensordot: both inputs should have same dtype, got ",
              dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  const std::vector<bool> in_a = dim_mask(dims_a, a.dim(), "tensordot");
  const std::vector<bool> in_b = dim_mask(dims_b, b.dim(), "tensordot");
  Dims ca, cb, free_a, free_b;
  for (size_t k = 0; k < dims_a.size(); ++k) {
    ca.push_back(wrap_dim(dims_a[k], a.dim(), "tensordot"));
    cb.push_back(wrap_dim(dims_b[k], b.dim(), "tensordot"));
    EMBER_CHECK(a.size(ca[k]) == b.size(cb[k]), Error,
                "tensordot: contracted dimensions need to match, but first has size ", a.size(ca[k]), " in dim ",
                dims_a[k], " and second has size ", b.size(cb[k]), " in dim ", dims_b[k], " (shapes ",
                a.shape_str(), " and ", b.shape_str(), ")");
  }
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (dims_a.empty() || !in_a[d]) free_a.push_back(d);
  }
  for (int64_t d = 0; d < b.dim(); ++d) {
    if (dims_b.empty() || !in_b[d]) free_b.push_back(d);
  }
  const Shape fa = sizes_of(a, free_a), fb = sizes_of(b, free_b);
  const int64_t m = numel_of(fa), n = numel_of(fb), k = numel_of(sizes_of(a, ca));
  Dims pa = free_a, pb = cb;
  pa.insert(pa.end(), ca.begin(), ca.end());
  pb.insert(pb.end(), free_b.begin(), free_b.end());
  return as_op("tensordot", [&] {
    const Tensor product = mm(reshape(permute(a, pa), {m, k}), reshape(permute(b, pb), {k, n}));
    Shape shape = fa;
    shape.insert(shape.end(), fb.begin(), fb.end());
    return reshape(product, shape);
  });
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, "tensordot: got an undefined tensor");
  EMBER_CHECK(dims >= 0, Error, "tensordot: expects dims >= 0, but got dims=", dims);
  EMBER_CHECK(dims <= a.dim() && dims <= b.dim(), Error, "tensordot: expects dims <= the ndim of both inputs (",
              a.dim(), " and ", b.dim(), "), but got dims=", dims);
  Dims da, db;
  for (int64_t k = 0; k < dims; ++k) {
    da.push_back(a.dim() - dims + k);
    db.push_back(k);
  }
  return tensordot(a, b, da, db);
}

Tensor kron(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.defined() && b.defined(), ValueError, "kron: got an undefined tensor");
  const int64_t nd = std::max(a.dim(), b.dim());
  Shape sa(nd - a.dim(), 1), sb(nd - b.dim(), 1);
  sa.insert(sa.end(), a.shape().begin(), a.shape().end());
  sb.insert(sb.end(), b.shape().begin(), b.shape().end());
  // a as [a0, 1, a1, 1, ...] times b as [1, b0, 1, b1, ...], then pairs merged.
  Shape ia, ib, out;
  for (int64_t d = 0; d < nd; ++d) {
    ia.insert(ia.end(), {sa[d], 1});
    ib.insert(ib.end(), {1, sb[d]});
    out.push_back(sa[d] * sb[d]);
  }
  return as_op("kron", [&] { return reshape(mul(reshape(a, ia), reshape(b, ib)), out); });
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, const std::string& compute_mode) {
  EMBER_CHECK(x1.defined() && x2.defined(), ValueError, "cdist: got an undefined tensor");
  EMBER_CHECK(x1.dim() >= 2 && x2.dim() >= 2, Error, "cdist: only supports at least 2D tensors, got X1 of shape ",
              x1.shape_str(), " and X2 of shape ", x2.shape_str());
  EMBER_CHECK(is_floating(x1.dtype()), Error, "cdist: only supports floating-point dtypes, X1 got: ",
              dtype_name(x1.dtype()));
  EMBER_CHECK(x1.dtype() == x2.dtype(), Error, "cdist: X1 and X2 must have the same dtype, got ",
              dtype_name(x1.dtype()), " and ", dtype_name(x2.dtype()));
  EMBER_CHECK(x1.size(-1) == x2.size(-1), Error, "cdist: X1 and X2 must have the same number of columns. X1: ",
              x1.size(-1), " X2: ", x2.size(-1));
  EMBER_CHECK(p >= 0, Error, "cdist: only supports non-negative p values, got ", p);
  const bool mm_if_necessary = compute_mode == "use_mm_for_euclid_dist_if_necessary";
  const bool always_mm = compute_mode == "use_mm_for_euclid_dist";
  EMBER_CHECK(mm_if_necessary || always_mm || compute_mode == "donot_use_mm_for_euclid_dist", ValueError, "cdist: ",
              compute_mode, " is not a valid value for compute_mode");
  const bool use_mm = p == 2 && (always_mm || (mm_if_necessary && (x1.size(-2) > 25 || x2.size(-2) > 25)));
  return as_op("cdist", [&] {
    if (use_mm) {
      // |x - y|^2 = |x|^2 - 2 x.y + |y|^2, clamped above 0 before the sqrt (as PyTorch) so
      // rounding cannot make it negative and the gradient at a zero distance stays finite.
      const Tensor n1 = sum(mul(x1, x1), {-1}, true);
      const Tensor n2 = transpose(sum(mul(x2, x2), {-1}, true), -1, -2);
      const Tensor dots = matmul(x1, transpose(x2, -1, -2));
      const Tensor sq = add(sub(n1, dots, 2), n2);
      return sqrt(clamp(sq, Scalar(1e-30), std::nullopt));
    }
    return norm(sub(unsqueeze(x1, -2), unsqueeze(x2, -3)), p, {-1});
  });
}

}  // namespace ember
