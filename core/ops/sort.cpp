// sort / argsort / topk / msort front-ends: argument checks, the sorted dim
// moved last (a contiguous [rows, n] block for the kernels), the CPU or CUDA
// kernel, the result moved back, and the autograd node of the values.
#include <ember/core/ops/sort.h>

#include <algorithm>

#include <ember/autograd/functions/sort.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/search.h>
#include <ember/core/cpu/sort.h>
#include <ember/core/error.h>
#include <ember/core/ops/factory.h>
#include <ember/cuda/sort.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

void check_input(const Tensor& x, const char* op) {
  EMBER_CHECK(x.defined(), Error, op, ": expected a defined tensor");
  EMBER_CHECK(x.device().is_cpu() || x.device().is_cuda(), NotImplementedError, op, ": no kernel for device ",
              x.device().str());
}

// x with the sorted dim swapped with the last one, as the contiguous rows the
// kernels take (a 0-d x is one row of one element). The CPU kernels compute
// float16/bfloat16 in float32, which holds their values exactly.
struct Rows {
  Tensor data;
  int64_t dim = 0, last = 0;  // the swapped dims of data
  int64_t count = 0, n = 0;   // rows and their length
};

Rows to_rows(const Tensor& x, int64_t dim) {
  Rows r;
  Tensor t = x.dim() == 0 ? x.detach().reshape({1}) : x.detach();
  r.dim = dim;
  r.last = t.dim() - 1;
  if (r.dim != r.last) t = t.transpose(r.dim, r.last);
  if (t.device().is_cpu() && is_half(t.dtype())) t = t.to(DType::Float32);
  r.data = t.contiguous();
  r.n = r.data.shape()[r.last];
  r.count = r.n == 0 ? 0 : r.data.numel() / r.n;
  return r;
}

// A kernel output laid out as `r` back in x's dims (and dtype `dtype`).
Tensor from_rows(const Tensor& out, const Rows& r, const Tensor& x, DType dtype) {
  Tensor t = r.dim == r.last ? out : out.transpose(r.dim, r.last).contiguous();
  if (x.dim() == 0) t = t.reshape({});
  return t.dtype() == dtype ? t : t.to(dtype);
}

// Sorts rows on their device: [count, n] values and int64 indices.
std::tuple<Tensor, Tensor> sort_rows(const Rows& r, bool descending) {
  Tensor values = empty(r.data.shape(), r.data.dtype(), r.data.device());
  Tensor indices = empty(r.data.shape(), DType::Int64, r.data.device());
  if (r.count > 0) {
    if (r.data.device().is_cuda()) cuda::sort(values, indices, r.data, r.count, r.n, descending);
    else cpu::sort(values, indices, r.data, r.count, r.n, descending);
  }
  return {values, indices};
}

void record_values(const char* node, const Tensor& x, const Tensor& values, const Tensor& indices, int64_t dim) {
  if (is_floating(x.dtype()) && autograd::any_requires_grad({x})) {
    autograd::record(node, {x}, {values}, {indices}, functions::sort_backward(x.shape(), dim));
  }
}

// (values, indices, the wrapped dim) of a sort.
std::tuple<Tensor, Tensor, int64_t> sort_impl(const Tensor& x, int64_t dim, bool descending, const char* op) {
  check_input(x, op);
  const int64_t d = wrap_dim(dim, x.dim(), op);  // 0 for a 0-d x
  const Rows r = to_rows(x, d);
  auto [values, indices] = sort_rows(r, descending);
  return {from_rows(values, r, x, x.dtype()), from_rows(indices, r, x, DType::Int64), d};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool /*stable: always*/) {
  auto [values, indices, d] = sort_impl(x, dim, descending, "sort");
  record_values("SortBackward0", x, values, indices, d);
  return {values, indices};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool /*stable: always*/) {
  return std::get<1>(sort_impl(x, dim, descending, "argsort"));
}

Tensor msort(const Tensor& x) { return std::get<0>(sort(x, 0)); }

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right) {
  const Tensor& seq = sorted_sequence;
  bool leading_match = seq.dim() == values.dim() && seq.dim() > 0;
  for (int64_t d = 0; leading_match && d + 1 < seq.dim(); ++d) leading_match = seq.size(d) == values.size(d);
  EMBER_CHECK(seq.dim() == 1 || leading_match, Error,
              "searchsorted: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
              "and input value tensor must match, but we got boundaries tensor ", seq.shape_str(),
              " and input value tensor ", values.shape_str());
  EMBER_CHECK(!is_complex(seq.dtype()) && !is_complex(values.dtype()), Error,
              "searchsorted: complex tensors are not ordered, got ", dtype_name(seq.dtype()), " and ",
              dtype_name(values.dtype()));
  EMBER_CHECK(seq.device() == values.device(), Error, "searchsorted: expected sorted_sequence and values on one "
              "device, got ", seq.device().str(), " and ", values.device().str());
  if (!seq.device().is_cpu()) return searchsorted(seq.cpu(), values.cpu(), right).to(seq.device());
  const DType common = promote_types(seq.dtype(), values.dtype());
  const Tensor s = seq.detach().to(common).contiguous(), v = values.detach().to(common).contiguous();
  Tensor out = empty(values.shape(), DType::Int64, kCPU);
  if (out.numel() == 0) return out;
  const int64_t n = s.size(-1);
  const bool shared = s.dim() == 1;
  const int64_t m = shared ? v.numel() : v.size(-1);
  cpu::searchsorted(out, s, v, shared ? 1 : s.numel() / std::max<int64_t>(n, 1), v.numel() / m, n, m, right);
  return out;
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted: always*/) {
  check_input(x, "topk");
  const int64_t d = wrap_dim(dim, x.dim(), "topk");  // 0 for a 0-d x
  EMBER_CHECK(x.dtype() != DType::Bool, NotImplementedError,
              "topk: not implemented for bool tensors (as in PyTorch); convert with .int() first");
  const int64_t n = x.dim() == 0 ? 1 : x.shape()[d];
  EMBER_CHECK(k >= 0 && k <= n, Error, "topk: selected index k (", k, ") out of range for dimension ", d, " of size ",
              n);
  const Rows r = to_rows(x, d);
  Tensor values, indices;
  if (x.dim() == 0) {  // PyTorch returns the element itself for k = 0 and k = 1
    std::tie(values, indices) = sort_rows(r, largest);
  } else if (r.data.device().is_cuda()) {
    // The GPU sorts whole rows (stable, so ties keep the CPU's order) and keeps the first k.
    std::tie(values, indices) = sort_rows(r, largest);
    values = values.narrow(r.last, 0, k).contiguous();
    indices = indices.narrow(r.last, 0, k).contiguous();
  } else {
    Shape shape = r.data.shape();
    shape[r.last] = k;
    values = empty(shape, r.data.dtype(), r.data.device());
    indices = empty(shape, DType::Int64, r.data.device());
    if (r.count > 0) cpu::topk(values, indices, r.data, r.count, r.n, k, largest);
  }
  values = from_rows(values, r, x, x.dtype());
  indices = from_rows(indices, r, x, DType::Int64);
  record_values("TopkBackward0", x, values, indices, d);
  return {values, indices};
}

}  // namespace ember
