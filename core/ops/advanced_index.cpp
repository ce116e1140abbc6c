// Advanced indexing (index, index_put_) and Python-style subscripts
// (getitem, setitem). Advanced indexing restrides x over the result shape:
// stride 0 on the broadcast index dims, whose offsets come from the indices.
#include <ember/autograd/functions/index.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/index.h>
#include <ember/core/error.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/index_kernels.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>

namespace ember {

namespace functions = autograd::functions;

namespace {

bool is_mask(const Tensor& t) { return t.dtype() == DType::Bool || t.dtype() == DType::UInt8; }

void check_kernel_device(const Tensor& x, const char* op) {
  EMBER_CHECK(x.device().is_cpu() || x.device().is_cuda(), NotImplementedError, op, ": no kernel for device ",
              x.device().str());
}

// Indices may sit on the CPU for a tensor on a GPU (they are moved there, as
// in PyTorch), not on another GPU or on a GPU for a CPU tensor.
void check_index_device(const Tensor& x, const Tensor& index, const char* op) {
  EMBER_CHECK(index.device() == x.device() || index.device().is_cpu(), Error, op,
              ": indices should be either on cpu or on the same device as the indexed tensor (", x.device().str(),
              "), but got an index on ", index.device().str());
}

// index_put's values on x's device: a 0-d tensor is moved; others must be there.
Tensor values_on(const Tensor& x, const Tensor& values, const char* op) {
  if (values.device() == x.device()) return values;
  EMBER_CHECK(values.dim() == 0, Error, op, ": expected the values on the device of the indexed tensor (",
              x.device().str(), "), but they are on ", values.device().str());
  return values.to(x.device());
}

// Bool masks replaced by the int64 coordinates of their true elements (one
// index per masked dim); int32 indices widened. Checks dtypes and mask shapes.
// checked[i] says out[i] is known to be in range: it came from a mask, or it
// was checked on the CPU before going to x's GPU. restride_advanced skips its
// range check, which on a GPU is a synchronization.
IndexList expand_masks(const Tensor& x, const IndexList& indices, const char* op, std::vector<bool>& checked) {
  IndexList out;
  for (const auto& idx : indices) {
    if (!idx || !idx->defined()) {
      out.push_back(std::nullopt);
      checked.push_back(false);
      continue;
    }
    const Tensor& t = *idx;
    check_index_device(x, t, op);
    if (is_mask(t)) {
      const int64_t at = static_cast<int64_t>(out.size());
      EMBER_CHECK(at + t.dim() <= x.dim(), IndexError, op, ": too many indices for tensor of dimension ", x.dim());
      for (int64_t k = 0; k < t.dim(); ++k) {
        EMBER_CHECK(t.size(k) == x.size(at + k), IndexError, op, ": the shape of the mask ", shape_str(t.shape()),
                    " at index ", k, " does not match the shape of the indexed tensor ", shape_str(x.shape()),
                    " at index ", at + k);
      }
      const Tensor nz = nonzero(t).to(x.device());
      for (int64_t k = 0; k < t.dim(); ++k) {
        out.push_back(select(nz, 1, k));
        checked.push_back(true);
      }
    } else {
      EMBER_CHECK(t.dtype() == DType::Int64 || t.dtype() == DType::Int32, IndexError, op,
                  ": tensors used as indices must be long, int, byte or bool tensors, got ", dtype_name(t.dtype()));
      const Tensor i64 = t.to(DType::Int64);
      const int64_t d = static_cast<int64_t>(out.size());
      const bool host_check = i64.device() != x.device() && d < x.dim();
      if (host_check) index_kernels::check_range(i64, x.size(d), d, op, true);
      out.push_back(i64.to(x.device()));
      checked.push_back(host_check);
    }
  }
  EMBER_CHECK(static_cast<int64_t>(out.size()) <= x.dim(), IndexError, op, ": too many indices for tensor of dimension ",
              x.dim(), " (got ", out.size(), ")");
  return out;
}

// x's storage seen over the result shape, and the indices over it.
struct Restrided {
  Tensor base;                      // x restrided: stride 0 on the index dims
  std::vector<Tensor> indices;      // int64, each over the result shape
  std::vector<int64_t> strides, sizes;
  Shape result_shape;
};

// `indices` must have been through expand_masks and hold at least one tensor.
Restrided restride_advanced(const Tensor& x, IndexList indices, const char* op, const std::vector<bool>& checked) {
  indices.resize(x.dim());
  Dims order;  // x's dims, indexed ones first when they are not adjacent
  std::vector<int64_t> pos;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (indices[d]) pos.push_back(d);
  const bool adjacent = pos.back() - pos.front() + 1 == static_cast<int64_t>(pos.size());
  if (adjacent) {
    for (int64_t d = 0; d < x.dim(); ++d) order.push_back(d);
  } else {
    order = pos;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (!indices[d]) order.push_back(d);
  }
  // Broadcast the index shapes.
  Shape b = indices[pos[0]]->shape();
  for (int64_t d : pos) {
    try {
      b = broadcast_shapes(b, indices[d]->shape(), op);
    } catch (const Error&) {
      std::string shapes;
      for (int64_t e : pos) shapes += (shapes.empty() ? "" : ", ") + shape_str(indices[e]->shape());
      throw IndexError(str(op, ": shape mismatch: indexing tensors could not be broadcast together with shapes ",
                           shapes));
    }
  }
  const int64_t first = adjacent ? pos.front() : 0;
  const int64_t k = static_cast<int64_t>(pos.size());
  const int64_t nb = static_cast<int64_t>(b.size());
  Restrided r;
  Strides base_strides;
  for (int64_t i = 0; i < first; ++i) {
    r.result_shape.push_back(x.size(order[i]));
    base_strides.push_back(x.stride(order[i]));
  }
  for (int64_t s : b) {
    r.result_shape.push_back(s);
    base_strides.push_back(0);
  }
  for (int64_t i = first + k; i < x.dim(); ++i) {
    r.result_shape.push_back(x.size(order[i]));
    base_strides.push_back(x.stride(order[i]));
  }
  r.base = make_view(x, r.result_shape, base_strides, x.storage_offset());
  for (int64_t d : pos) {
    if (d >= static_cast<int64_t>(checked.size()) || !checked[d]) {
      index_kernels::check_range(*indices[d], x.size(d), d, op, true);
    }
    const Tensor e = expand(indices[d]->detach(), b);
    Strides s(r.result_shape.size(), 0);
    for (int64_t i = 0; i < nb; ++i) s[first + i] = e.stride(i);
    r.indices.push_back(make_view(e, r.result_shape, s, e.storage_offset()));
    r.strides.push_back(x.stride(d));
    r.sizes.push_back(x.size(d));
  }
  return r;
}

bool any_defined(const IndexList& indices) {
  for (const auto& i : indices)
    if (i && i->defined()) return true;
  return false;
}

// Values as index_put writes them: x's dtype, leading 1s dropped, broadcast
// to the indexing result's shape.
Tensor values_for(const Tensor& values, const Shape& result_shape, DType dtype, const char* op) {
  Tensor v = values.to(dtype);
  while (v.dim() > static_cast<int64_t>(result_shape.size()) && v.size(0) == 1) v = v.squeeze(0);
  const bool ok = v.dim() <= static_cast<int64_t>(result_shape.size()) && [&] {
    for (int64_t i = 1; i <= v.dim(); ++i) {
      const int64_t vs = v.size(v.dim() - i), rs = result_shape[result_shape.size() - i];
      if (vs != rs && vs != 1) return false;
    }
    return true;
  }();
  EMBER_CHECK(ok, Error, op, ": shape mismatch: value tensor of shape ", shape_str(values.shape()),
              " cannot be broadcast to indexing result of shape ", shape_str(result_shape));
  return v.expand(result_shape);
}

// The subscript's only index when it is a bool mask of at least one dim that
// matches x's dims [at, at + mask.dim()) exactly, with its position in `at`;
// nullptr for any other subscript (the general path indexes those, or raises
// the shape error). x[mask] and x[mask] = v take their one-pass forms on it.
const Tensor* sole_mask(const Tensor& x, const IndexList& indices, int64_t& at) {
  at = -1;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i] || !indices[i]->defined()) continue;
    if (at >= 0) return nullptr;  // several indices
    at = static_cast<int64_t>(i);
  }
  if (at < 0) return nullptr;
  const Tensor& mask = *indices[at];
  if (mask.dtype() != DType::Bool || mask.dim() == 0 || at + mask.dim() > x.dim()) return nullptr;
  for (int64_t d = 0; d < mask.dim(); ++d) {
    if (mask.size(d) != x.size(at + d)) return nullptr;
  }
  return &mask;
}

// x[mask] on the CPU with the mask over x's leading dims: cpu::masked_rows
// compacts them in one pass, without the mask's coordinates.
const Tensor* leading_mask(const Tensor& x, const IndexList& indices) {
  int64_t at;
  const Tensor* mask = sole_mask(x, indices, at);
  return mask && at == 0 && x.device().is_cpu() && mask->device().is_cpu() ? mask : nullptr;
}

}  // namespace

Tensor index(const Tensor& x, const IndexList& indices_in) {
  check_kernel_device(x, "index");
  // A 0-d mask adds a dim of size 1 (True) or 0 (False), as in numpy.
  for (size_t i = 0; i < indices_in.size(); ++i) {
    const auto& t = indices_in[i];
    if (t && t->defined() && t->dim() == 0 && is_mask(*t)) {
      IndexList rest = indices_in;
      rest[i] = t->reshape({1});
      return index(unsqueeze(x, static_cast<int64_t>(i)), rest);
    }
  }
  if (const Tensor* mask = leading_mask(x, indices_in); mask && !autograd::any_requires_grad({x})) {
    return cpu::masked_rows(x.contiguous(), mask->contiguous());
  }
  std::vector<bool> checked;
  const IndexList indices = expand_masks(x, indices_in, "index", checked);
  if (!any_defined(indices)) return view(x, x.shape());
  Restrided r = restride_advanced(x, indices, "index", checked);
  Tensor out = empty(r.result_shape, x.dtype(), x.device());
  index_kernels::gather(out, r.base, r.indices, r.strides, r.sizes);
  if (autograd::any_requires_grad({x})) {
    autograd::record("IndexBackward0", {x}, {out}, {}, functions::index_backward(x.shape(), indices));
  }
  return out;
}

Tensor index_put(const Tensor& x, const IndexList& indices_in, const Tensor& values_in, bool accumulate) {
  check_kernel_device(x, "index_put_");
  const Tensor values = values_on(x, values_in, "index_put_");
  for (const auto& t : indices_in) {
    EMBER_CHECK(!t || !t->defined() || t->dim() > 0 || !is_mask(*t), NotImplementedError,
                "index_put_: 0-d bool indices are only supported through x[...] = v");
  }
  std::vector<bool> checked;
  const IndexList indices = expand_masks(x, indices_in, "index_put_", checked);
  Tensor out;
  {
    autograd::NoGradGuard no_grad;
    out = x.clone();
  }
  if (any_defined(indices)) {
    Restrided r = restride_advanced(out, indices, "index_put_", checked);
    const Tensor v = values_for(values.detach(), r.result_shape, x.dtype(), "index_put_");
    index_kernels::scatter(r.base, v, r.indices, r.strides, r.sizes, accumulate, "index_put_");
  } else {
    autograd::NoGradGuard no_grad;
    Tensor dst = out;
    copy_(dst, values_for(values.detach(), x.shape(), x.dtype(), "index_put_"));
  }
  if (autograd::any_requires_grad({x, values})) {
    autograd::record("IndexPutBackward0", {x, values}, {out}, {}, functions::index_put_backward(indices, accumulate));
  }
  return out;
}

Tensor& index_put_(Tensor& x, const IndexList& indices, const Tensor& values_in, bool accumulate) {
  autograd::check_inplace(x, "index_put_");
  if (autograd::any_requires_grad({x, values_in})) {
    return assign_inplace(x, index_put(x, indices, values_in, accumulate));
  }
  check_kernel_device(x, "index_put_");
  const Tensor values = values_on(x, values_in, "index_put_");
  std::vector<bool> checked;
  const IndexList expanded = expand_masks(x, indices, "index_put_", checked);
  // Values that alias x are read from a copy, so writes cannot feed later reads.
  const Tensor src = values.storage().data() == x.storage().data() ? values.clone() : values;
  if (!any_defined(expanded)) {
    copy_(x, values_for(src, x.shape(), x.dtype(), "index_put_"));
    return x;
  }
  Restrided r = restride_advanced(x, expanded, "index_put_", checked);
  const Tensor v = values_for(src, r.result_shape, x.dtype(), "index_put_");
  index_kernels::scatter(r.base, v, r.indices, r.strides, r.sizes, accumulate, "index_put_");
  x.bump_version();
  return x;
}

namespace {

// A subscript with its basic items applied as views; the tensors left for
// index(), placed at the dims of `view` they index.
struct Subscript {
  Tensor view;
  IndexList advanced;
};

Subscript apply_basic(const Tensor& x, const std::vector<TensorIndex>& items) {
  using Kind = TensorIndex::Kind;
  int64_t consumed = 0;
  bool ellipsis = false;
  for (const TensorIndex& it : items) {
    switch (it.kind) {
      case Kind::Integer:
      case Kind::Slice: ++consumed; break;
      case Kind::Tensor:
        EMBER_CHECK(it.tensor.defined(), ValueError, "index: got an undefined index tensor");
        consumed += is_mask(it.tensor) ? it.tensor.dim() : 1;
        break;
      case Kind::Ellipsis:
        EMBER_CHECK(!ellipsis, IndexError, "index: an index can only have a single ellipsis ('...')");
        ellipsis = true;
        break;
      default: break;
    }
  }
  EMBER_CHECK(consumed <= x.dim(), IndexError, "index: too many indices for tensor of dimension ", x.dim(),
              " (got ", consumed, ")");
  Subscript s{x, {}};
  int64_t d = 0;
  auto put = [&](int64_t at, const Tensor& t) {
    if (static_cast<int64_t>(s.advanced.size()) <= at) s.advanced.resize(at + 1);
    s.advanced[at] = t;
  };
  // True/False as an index: a new dim of size 1 or 0.
  auto mask_scalar = [&](bool b) {
    s.view = unsqueeze(s.view, d);
    put(d, full({1}, b, DType::Bool, x.device()));
    ++d;
  };
  for (const TensorIndex& it : items) {
    switch (it.kind) {
      case Kind::Integer: {
        const int64_t size = s.view.size(d);
        EMBER_CHECK(it.integer >= -size && it.integer < size, IndexError, "index: index ", it.integer,
                    " is out of bounds for dimension ", d, " with size ", size);
        s.view = select(s.view, d, it.integer);
        break;
      }
      case Kind::Slice:
        EMBER_CHECK(it.step > 0, ValueError, "index: step must be greater than zero");
        s.view = slice(s.view, d, it.start, it.stop, it.step);
        ++d;
        break;
      case Kind::None:
        s.view = unsqueeze(s.view, d);
        ++d;
        break;
      case Kind::Ellipsis: d += x.dim() - consumed; break;
      case Kind::Boolean: mask_scalar(it.boolean); break;
      case Kind::Tensor:
        if (is_mask(it.tensor) && it.tensor.dim() == 0) {
          mask_scalar(it.tensor.to(DType::Bool).item().to_bool());
        } else {
          put(d, it.tensor);
          d += is_mask(it.tensor) ? it.tensor.dim() : 1;
        }
        break;
    }
  }
  return s;
}

// x[mask] = v with one boolean mask and one value is masked_fill_, as in
// PyTorch: one pass over x instead of nonzero and a scatter. The mask covers
// dims [at, at + mask.dim()) of the view and must match them exactly (other
// shapes take the general path, which raises the indexing error).
bool masked_fill_instead(Tensor& view, const IndexList& advanced, const Tensor& value) {
  int64_t at;
  const Tensor* mask = sole_mask(view, advanced, at);
  if (!mask || value.numel() != 1 || mask->device() != view.device() || value.device() != view.device()) return false;
  Shape shape(static_cast<size_t>(view.dim()), 1);
  for (int64_t d = 0; d < mask->dim(); ++d) shape[at + d] = mask->size(d);
  view.masked_fill_(mask->reshape(shape), value.reshape({}));
  return true;
}

// Python drops leading 1s of the value: x[0] = ones(1, 3) works for x [2, 3].
Tensor strip_leading_ones(Tensor v, int64_t ndim) {
  while (v.dim() > ndim && v.size(0) == 1) v = v.squeeze(0);
  return v;
}

}  // namespace

Tensor getitem(const Tensor& x, const std::vector<TensorIndex>& items) {
  Subscript s = apply_basic(x, items);
  if (any_defined(s.advanced)) return index(s.view, s.advanced);
  return s.view.is_same(x) ? view(x, x.shape()) : s.view;
}

void setitem(Tensor& x, const std::vector<TensorIndex>& items, const Tensor& value) {
  if (autograd::any_requires_grad({x, value})) {
    autograd::check_inplace(x, "setitem");
    // Record one index_put over the flattened tensor: the subscript applied
    // to the element numbers of x says which elements are written.
    Tensor where;
    {
      autograd::NoGradGuard no_grad;
      where = getitem(arange(0, x.numel(), 1, DType::Int64, x.device()).view(x.shape()), items);
    }
    const Tensor v = values_for(value, where.shape(), x.dtype(), "setitem").reshape({-1});
    assign_inplace(x, index_put(reshape(x, {-1}), {where.reshape({-1})}, v).view(x.shape()));
    return;
  }
  Subscript s = apply_basic(x, items);
  if (any_defined(s.advanced)) {
    if (!masked_fill_instead(s.view, s.advanced, value)) index_put_(s.view, s.advanced, value);
  } else {
    copy_(s.view, strip_leading_ones(value, s.view.dim()));
  }
}

}  // namespace ember
