// Dim-wise index ops. Each restrides its operands over one iteration shape
// (stride 0 along the indexed dim) and calls index_gather/index_scatter of
// the operands' device (core/ops/index_kernels.h).
#include <ember/core/ops/index.h>

#include <ember/autograd/functions/index.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index_kernels.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

// The operands' device (common_device's rules: mixed devices raise, naming
// each operand's), which must have kernels.
Device kernel_device(const char* op, const std::vector<Tensor>& ts) {
  const Device dev = common_device(op, ts);
  EMBER_CHECK(dev.is_cpu() || dev.is_cuda(), NotImplementedError, op, ": no kernel for device ", dev.str());
  return dev;
}

// common_device lets 0-d tensors sit on another device; the kernels read
// every operand on `dev` (wrapped numbers are moved where they are used).
Tensor on(const Device& dev, const Tensor& t) {
  return !t.defined() || t.device() == dev || t.impl()->wrapped_number ? t : t.to(dev);
}

// gather/scatter take int64 indices only, as PyTorch.
void check_long_index(const char* op, const Tensor& index) {
  EMBER_CHECK(index.defined(), ValueError, op, ": got an undefined index tensor");
  EMBER_CHECK(index.dtype() == DType::Int64, Error, op, ": expected dtype int64 for index, got ",
              dtype_name(index.dtype()));
}

// index_select/index_add take a 1-D (or 0-d) int64/int32 index; returns it as int64.
Tensor vector_index(const char* op, const Tensor& index) {
  EMBER_CHECK(index.defined(), ValueError, op, ": got an undefined index tensor");
  EMBER_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, Error, op,
              ": expected dtype int32 or int64 for index, got ", dtype_name(index.dtype()));
  EMBER_CHECK(index.dim() <= 1, IndexError, op, ": index is supposed to be a vector, got shape ",
              shape_str(index.shape()));
  return index.to(DType::Int64).reshape({-1});
}

// Geometry of `t` with `shape` and stride 0 along `dim` (the indexed dim).
Tensor restride(const Tensor& t, const Shape& shape, int64_t dim) {
  Strides s = t.strides();
  s[dim] = 0;
  return make_view(t, shape, s, t.storage_offset());
}

// 1-D index spread over `shape`: its own stride along dim, 0 elsewhere.
Tensor spread(const Tensor& index, const Shape& shape, int64_t dim) {
  Strides s(shape.size(), 0);
  s[dim] = index.stride(0);
  return make_view(index, shape, s, index.storage_offset());
}

// Checks index/self/src shapes for gather and scatter (PyTorch's rules: same
// rank; index no larger than src anywhere, nor than self outside dim).
void check_scatter_gather_shapes(const char* op, int64_t dim, const Tensor& self, const Tensor& index,
                                 const Tensor* src) {
  EMBER_CHECK(index.dim() == self.dim() || index.numel() == 0, Error, op,
              ": index tensor must have the same number of dimensions as input tensor (index shape ",
              shape_str(index.shape()), ", input shape ", shape_str(self.shape()), ")");
  if (index.numel() == 0) return;
  EMBER_CHECK(!src || src->dim() == index.dim(), Error, op,
              ": index tensor must have the same number of dimensions as src tensor (index shape ",
              shape_str(index.shape()), ", src shape ", shape_str(src->shape()), ")");
  for (int64_t k = 0; k < self.dim(); ++k) {
    EMBER_CHECK(k == dim || index.size(k) <= self.size(k), Error, op, ": size does not match at dimension ", k,
                ": expected index ", shape_str(index.shape()), " to be no larger than self ",
                shape_str(self.shape()), " apart from dimension ", dim);
    if (src) {
      EMBER_CHECK(index.size(k) <= src->size(k), Error, op, ": size does not match at dimension ", k,
                  ": expected index ", shape_str(index.shape()), " to be no larger than src ",
                  shape_str(src->shape()));
    }
  }
}

// A copy of t outside the graph (the op records its own node).
Tensor fresh_copy(const Tensor& t) {
  autograd::NoGradGuard no_grad;
  return t.clone();
}

// 0-d operands act as 1-element vectors.
Tensor at_least_1d(const Tensor& t) { return t.dim() == 0 ? make_view(t, {1}, {1}, t.storage_offset()) : t; }

// self with src (or value) written at index along dim; `accumulate` adds.
Tensor scatter_impl(const char* op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                    bool accumulate) {
  const Tensor s1 = at_least_1d(self), i1 = at_least_1d(index), v1 = at_least_1d(src);
  const int64_t d = wrap_dim(dim, s1.dim(), op);
  check_scatter_gather_shapes(op, d, s1, i1, src.impl()->wrapped_number ? nullptr : &v1);
  Tensor out = fresh_copy(self);
  if (i1.numel() == 0) return out;
  Tensor o1 = at_least_1d(out);
  index_kernels::check_range(i1, s1.size(d), d, op, false, cpu::RangeError::Runtime);
  const Tensor values = src.impl()->wrapped_number ? src.to(self.device(), self.dtype()).expand(i1.shape())
                                                   : make_view(v1, i1.shape(), v1.strides(), v1.storage_offset());
  Tensor dst = restride(o1, i1.shape(), d);
  index_kernels::scatter(dst, values, {i1}, {o1.stride(d)}, {o1.size(d)}, accumulate, op);
  return out;
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index_in) {
  Tensor index = vector_index("index_select", index_in);
  index = on(kernel_device("index_select", {x, index}), index);
  EMBER_CHECK(x.dim() > 0 || index.numel() == 1, IndexError,
              "index_select: index to a 0-dim tensor can have only 1 value, got ", index.numel());
  const Tensor x1 = at_least_1d(x);
  const int64_t d = wrap_dim(dim, x1.dim(), "index_select");
  index_kernels::check_range(index, x1.size(d), d, "index_select", false);
  Shape shape = x1.shape();
  shape[d] = index.numel();
  Tensor out = empty(shape, x.dtype(), x.device());
  if (out.device().is_cpu() && x1.is_contiguous() && index.is_contiguous()) {
    cpu::index_select_blocks(out, x1, d, index);
  } else {
    index_kernels::gather(out, restride(x1, shape, d), {spread(index, shape, d)}, {x1.stride(d)}, {x1.size(d)});
  }
  if (x.dim() == 0) out = out.reshape({});
  if (autograd::any_requires_grad({x})) {
    autograd::record("IndexSelectBackward0", {x}, {out}, {}, functions::index_select_backward(x.shape(), dim, index));
  }
  return out;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index_in) {
  check_long_index("gather", index_in);
  const Tensor index = on(kernel_device("gather", {x, index_in}), index_in);
  const Tensor x1 = at_least_1d(x), i1 = at_least_1d(index);
  const int64_t d = wrap_dim(dim, x1.dim(), "gather");
  check_scatter_gather_shapes("gather", d, x1, i1, nullptr);
  Tensor out = empty(index.shape(), x.dtype(), x.device());
  if (i1.numel() > 0) {
    Tensor o1 = at_least_1d(out);
    index_kernels::gather_checked(o1, restride(x1, i1.shape(), d), i1, x1.stride(d), x1.size(d), d, "gather",
                                  cpu::RangeError::Runtime);
  }
  if (autograd::any_requires_grad({x})) {
    autograd::record("GatherBackward0", {x}, {out}, {}, functions::gather_backward(x.shape(), dim, index));
  }
  return out;
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index_in, const Tensor& src_in) {
  check_long_index("scatter", index_in);
  const Device dev = kernel_device("scatter", {x, index_in, src_in});
  const Tensor index = on(dev, index_in), src = on(dev, src_in);
  EMBER_CHECK(src.dtype() == x.dtype(), Error, "scatter: expected self.dtype to be equal to src.dtype (got ",
              dtype_name(x.dtype()), " and ", dtype_name(src.dtype()), ")");
  Tensor out = scatter_impl("scatter", x, dim, index, src, false);
  if (autograd::any_requires_grad({x, src})) {
    autograd::record("ScatterBackward0", {x, src}, {out}, {}, functions::scatter_backward(dim, index, src.shape()));
  }
  return out;
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index_in, const Scalar& value) {
  check_long_index("scatter", index_in);
  const Tensor index = on(kernel_device("scatter", {x, index_in}), index_in);
  Tensor out = scatter_impl("scatter", x, dim, index, scalar_tensor(value, x.device()), false);
  if (autograd::any_requires_grad({x})) {
    autograd::record("ScatterBackward1", {x}, {out}, {}, functions::scatter_backward(dim, index));
  }
  return out;
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index_in, const Tensor& src_in) {
  check_long_index("scatter_add", index_in);
  const Device dev = kernel_device("scatter_add", {x, index_in, src_in});
  const Tensor index = on(dev, index_in), src = on(dev, src_in);
  EMBER_CHECK(src.dtype() == x.dtype(), Error, "scatter_add: expected self.dtype to be equal to src.dtype (got ",
              dtype_name(x.dtype()), " and ", dtype_name(src.dtype()), ")");
  Tensor out = scatter_impl("scatter_add", x, dim, index, src, true);
  if (autograd::any_requires_grad({x, src})) {
    autograd::record("ScatterAddBackward0", {x, src}, {out}, {}, functions::scatter_add_backward(dim, index, src.shape()));
  }
  return out;
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index_in, const Tensor& source_in, const Scalar& alpha) {
  Tensor index = vector_index("index_add", index_in);
  const Device dev = kernel_device("index_add", {x, index, source_in});
  index = on(dev, index);
  const Tensor source = on(dev, source_in);
  EMBER_CHECK(source.dtype() == x.dtype(), Error, "index_add: self (", dtype_name(x.dtype()), ") and source (",
              dtype_name(source.dtype()), ") must have the same scalar type");
  const Tensor x1 = at_least_1d(x), s1 = at_least_1d(source);
  const int64_t d = wrap_dim(dim, x1.dim(), "index_add");
  EMBER_CHECK(s1.dim() == x1.dim(), Error, "index_add: source ", shape_str(source.shape()),
              " and self ", shape_str(x.shape()), " must have the same number of dimensions");
  EMBER_CHECK(s1.size(d) == index.numel(), Error, "index_add: number of indices (", index.numel(),
              ") should be equal to source.size(dim) (", s1.size(d), ")");
  for (int64_t k = 0; k < x1.dim(); ++k) {
    EMBER_CHECK(k == d || s1.size(k) == x1.size(k), Error, "index_add: source ", shape_str(source.shape()),
                " and self ", shape_str(x.shape()), " must match in every dimension but ", d);
  }
  index_kernels::check_range(index, x1.size(d), d, "index_add", false);
  Tensor out = fresh_copy(x);
  {
    autograd::NoGradGuard no_grad;
    Tensor o1 = at_least_1d(out);
    Tensor values = alpha.to_double() == 1.0 ? s1 : s1.mul(scalar_tensor(alpha)).to(x.dtype());
    Tensor dst = restride(o1, s1.shape(), d);
    index_kernels::scatter(dst, values, {spread(index, s1.shape(), d)}, {o1.stride(d)}, {o1.size(d)}, true,
                           "index_add");
  }
  if (autograd::any_requires_grad({x, source})) {
    autograd::record("IndexAddBackward0", {x, source}, {out}, {}, functions::index_add_backward(dim, index, alpha));
  }
  return out;
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim) {
  EMBER_CHECK(indices.defined() && indices.dtype() == DType::Int64, Error,
              "take_along_dim: dtype of indices should be int64 but got ",
              indices.defined() ? dtype_name(indices.dtype()) : "undefined");
  if (!dim) return gather(reshape(x, {-1}), 0, reshape(indices, {-1}));
  EMBER_CHECK(x.dim() == indices.dim(), Error,
              "take_along_dim: input and indices should have the same number of dimensions, but got ", x.dim(),
              " dimensions for input, and ", indices.dim(), " dimensions for indices");
  const int64_t d = wrap_dim(*dim, std::max<int64_t>(x.dim(), 1), "take_along_dim");
  if (x.dim() == 0) return gather(x, 0, indices);
  // Broadcast every dim but `d`.
  Shape xs = x.shape(), is = indices.shape();
  xs[d] = 1;
  is[d] = 1;
  Shape b = broadcast_shapes(xs, is, "take_along_dim");
  Shape bx = b, bi = b;
  bx[d] = x.size(d);
  bi[d] = indices.size(d);
  return gather(expand(x, bx), d, expand(indices, bi));
}

Tensor one_hot(const Tensor& x, int64_t num_classes) {
  EMBER_CHECK(x.defined() && x.dtype() == DType::Int64, Error,
              "one_hot: is only applicable to index tensors of dtype int64, got ",
              x.defined() ? dtype_name(x.dtype()) : "undefined");
  kernel_device("one_hot", {x});
  EMBER_CHECK(num_classes >= -1, Error, "one_hot: num_classes should be -1 or non-negative, got ", num_classes);
  EMBER_CHECK(num_classes != -1 || x.numel() > 0, Error,
              "one_hot: can not infer total number of classes from empty tensor");
  if (x.numel() > 0) {
    const auto [lo, hi] = index_kernels::min_max(x);  // on a GPU: read back, one synchronization
    if (num_classes == -1) num_classes = hi + 1;
    EMBER_CHECK(lo >= 0, Error, "one_hot: class values must be non-negative, got ", lo);
    EMBER_CHECK(hi < num_classes, Error, "one_hot: class values must be smaller than num_classes (", num_classes,
                "), got ", hi);
  }
  Shape shape = x.shape();
  shape.push_back(num_classes);
  Tensor out = zeros(shape, DType::Int64, x.device());
  if (x.numel() == 0 || num_classes == 0) return out;
  // out[..., x[...]] = 1, written in place: the classes were checked above.
  const Tensor classes = unsqueeze(x.detach(), -1);
  const int64_t last = out.dim() - 1;
  Tensor dst = restride(out, classes.shape(), last);
  const Tensor one = scalar_tensor(Scalar(int64_t{1}), DType::Int64, x.device()).expand(classes.shape());
  index_kernels::scatter(dst, one, {classes}, {out.stride(last)}, {num_classes}, false, "one_hot");
  return out;
}

Tensor nonzero(const Tensor& x) {
  if (kernel_device("nonzero", {x}).is_cuda()) return cuda::nonzero(x);
  return cpu::nonzero(x);
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  EMBER_CHECK(mask.defined() && mask.dtype() == DType::Bool, Error,
              "masked_select: expected a bool tensor for mask, got ",
              mask.defined() ? dtype_name(mask.dtype()) : "undefined");
  const Shape shape = broadcast_shapes(x.shape(), mask.shape(), "masked_select");
  return index(expand(x, shape), {expand(mask, shape)});
}

namespace {
// The in-place forms: compute out of place, write back, take over the history.
Tensor& assign(Tensor& self, const Tensor& result, const char* op) {
  autograd::check_inplace(self, op);
  check_no_internal_overlap(self, op);
  return assign_inplace(self, result);
}
}  // namespace

Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  return assign(x, scatter(x, dim, index, value), "scatter_");
}

Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return ember::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return ember::gather(*this, dim, index); }
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return ember::index_add(*this, dim, index, source, alpha);
}
Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  return ember::take_along_dim(*this, indices, dim);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  return assign(*this, ember::scatter(*this, dim, index, src), "scatter_");
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  return assign(*this, ember::scatter_add(*this, dim, index, src), "scatter_add_");
}
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return assign(*this, ember::index_add(*this, dim, index, source, alpha), "index_add_");
}

}  // namespace ember
