// Shape ops and views, with their backward formulas inline: each is a few
// lines of other shape ops.
#include <ember/core/ops/shape.h>

#include <algorithm>
#include <optional>

#include <ember/autograd/functions/shape.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/shape.h>
#include <ember/core/error.h>
#include <ember/core/int_math.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/diagonal.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/index.h>
#include <ember/core/ops/windows.h>
#include <ember/core/ops/index_kernels.h>
#include <ember/core/ops/reduce.h>

namespace ember {

namespace functions = autograd::functions;

Shape infer_shape(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int64_t known = 1;
  bool overflow = false;  // a product past int64 (unless a later 0 clears it) matches no numel
  int infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      EMBER_CHECK(infer < 0, Error, op, ": only one dimension can be inferred in shape ", shape_str(shape));
      infer = static_cast<int>(i);
    } else {
      EMBER_CHECK(out[i] >= 0, Error, op, ": invalid shape dimension ", out[i], " in ", shape_str(shape));
      overflow |= __builtin_mul_overflow(known, out[i], &known);
    }
  }
  EMBER_CHECK(!overflow || known == 0, Error, op, ": shape ", shape_str(shape), " is invalid for input of size ",
              numel);
  if (infer >= 0) {
    EMBER_CHECK(known != 0 && numel % known == 0, Error, op, ": shape ", shape_str(shape),
                " is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    EMBER_CHECK(known == numel, Error, op, ": shape ", shape_str(shape), " is invalid for input of size ", numel);
  }
  return out;
}

namespace {

// Strides for viewing x as `shape` without a copy, or empty when impossible
// (PyTorch's computeStride: match chunks of contiguous dims).
std::optional<Strides> view_strides(const Tensor& x, const Shape& shape) {
  const Shape& old = x.shape();
  const Strides& olds = x.strides();
  Strides out(shape.size());
  if (x.numel() == 0 || old.empty()) {
    return contiguous_strides(shape);
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk = olds.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old.size()) - 1; d >= 0; --d) {
    tensor_numel *= old[d];
    if (d == 0 || (old[d - 1] != 1 && olds[d - 1] != tensor_numel * chunk)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk = olds[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Tensor record_view(const char* name, const Tensor& x, Tensor out, autograd::Vjp vjp) {
  out.impl()->view_base = x.impl()->view_base ? x.impl()->view_base : x.impl_ptr();
  if (autograd::any_requires_grad({x})) autograd::record(name, {x}, {out}, {}, std::move(vjp));
  return out;
}

}  // namespace

Tensor view(const Tensor& x, const Shape& shape_in) {
  const Shape shape = infer_shape(shape_in, x.numel(), "view");
  auto strides = view_strides(x, shape);
  EMBER_CHECK(strides, Error, "view: size is not compatible with input tensor's size and stride (shape ",
              shape_str(x.shape()), ", strides ", shape_str(x.strides()), " viewed as ", shape_str(shape),
              "); at least one dimension spans across two contiguous subspaces. Use .reshape(...) instead.");
  return record_view("ViewBackward0", x, make_view(x, shape, *strides, x.storage_offset()),
                     functions::reshape_backward(x.shape()));
}

Tensor reshape(const Tensor& x, const Shape& shape_in) {
  const Shape shape = infer_shape(shape_in, x.numel(), "reshape");
  if (view_strides(x, shape)) return view(x, shape);
  return view(x.contiguous(), shape);
}

Tensor expand(const Tensor& x, const Shape& shape) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  EMBER_CHECK(nd >= x.dim(), Error, "expand: the number of sizes provided (", nd,
              ") must be greater or equal to the number of dimensions in the tensor (", x.dim(), ")");
  Shape out_shape(nd);
  Strides out_strides(nd);
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t xi = i - (nd - x.dim());
    const int64_t size = xi >= 0 ? x.shape()[xi] : 1;
    const int64_t stride = xi >= 0 ? x.strides()[xi] : 0;
    int64_t target = shape[i];
    if (target == -1) {
      EMBER_CHECK(xi >= 0, Error, "expand: -1 is not allowed in a leading, non-existing dimension");
      target = size;
    }
    EMBER_CHECK(size == target || size == 1, Error, "expand: the expanded size of the tensor (", target,
                ") must match the existing size (", size, ") at non-singleton dimension ", i,
                ". Target sizes: ", shape_str(shape), ". Tensor sizes: ", shape_str(x.shape()));
    out_shape[i] = target;
    out_strides[i] = size == target ? stride : 0;
  }
  return record_view("ExpandBackward0", x, make_view(x, out_shape, out_strides, x.storage_offset()),
                     functions::expand_backward(x.shape()));
}

Tensor permute(const Tensor& x, const Dims& dims) {
  const int64_t nd = x.dim();
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == nd, Error, "permute: number of dims don't match in permute (got ",
              dims.size(), " dims for a tensor of shape ", shape_str(x.shape()), ")");
  Shape shape(nd);
  Strides strides(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t d = wrap_dim(dims[i], nd, "permute");
    EMBER_CHECK(!seen[d], Error, "permute: repeated dim ", d, " in ", shape_str(dims));
    seen[d] = true;
    shape[i] = x.shape()[d];
    strides[i] = x.strides()[d];
  }
  Dims wrapped(nd);
  for (int64_t i = 0; i < nd; ++i) wrapped[i] = wrap_dim(dims[i], nd, "permute");
  return record_view("PermuteBackward0", x, make_view(x, shape, strides, x.storage_offset()),
                     functions::permute_backward(wrapped));
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  const int64_t nd = x.dim();
  const int64_t a = wrap_dim(dim0, nd, "transpose"), b = wrap_dim(dim1, nd, "transpose");
  if (nd == 0) return view(x, {});
  Dims dims(nd);
  for (int64_t i = 0; i < nd; ++i) dims[i] = i;
  std::swap(dims[a], dims[b]);
  return permute(x, dims);
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  Shape shape = x.shape();
  Strides strides = x.strides();
  const int64_t stride = d < x.dim() ? shape[d] * strides[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return record_view("UnsqueezeBackward0", x, make_view(x, shape, strides, x.storage_offset()),
                     functions::reshape_backward(x.shape()));
}

Tensor squeeze(const Tensor& x, std::optional<int64_t> dim) {
  Shape shape;
  Strides strides;
  const int64_t only = dim ? wrap_dim(*dim, x.dim(), "squeeze") : -1;
  for (int64_t i = 0; i < x.dim(); ++i) {
    const bool drop = x.shape()[i] == 1 && (!dim || i == only);
    if (!drop) {
      shape.push_back(x.shape()[i]);
      strides.push_back(x.strides()[i]);
    }
  }
  return record_view("SqueezeBackward0", x, make_view(x, shape, strides, x.storage_offset()),
                     functions::reshape_backward(x.shape()));
}

Tensor unflatten(const Tensor& x, int64_t dim, const Shape& sizes) {
  const int64_t d = wrap_dim(dim, x.dim(), "unflatten");
  EMBER_CHECK(!sizes.empty(), Error, "unflatten: sizes must be non-empty");
  const Shape inner = infer_shape(sizes, x.size(d), "unflatten");
  Shape shape(x.shape().begin(), x.shape().begin() + d);
  shape.insert(shape.end(), inner.begin(), inner.end());
  shape.insert(shape.end(), x.shape().begin() + d + 1, x.shape().end());
  return reshape(x, shape);
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK(x.dim() > 0, Error, "narrow: cannot be applied to a 0-dim tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "narrow");
  const int64_t size = x.size(d);
  EMBER_CHECK(start >= -size && start <= size, IndexError, "narrow: start out of range (expected to be in range of [",
              -size, ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  EMBER_CHECK(length >= 0 && length <= size - start, Error, "narrow: start (", start, ") + length (", length,
              ") exceeds dimension size (", size, ")");
  return slice(x, d, start, start + length, 1);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  EMBER_CHECK(x.dim() > 0, IndexError, "select: cannot be applied to a 0-dim tensor");
  const int64_t d = wrap_dim(dim, x.dim(), "select");
  const int64_t size = x.size(d);
  EMBER_CHECK(index >= -size && index < size, IndexError, "select: index ", index,
              " is out of bounds for dimension ", d, " with size ", size);
  if (index < 0) index += size;
  Shape shape = x.shape();
  Strides strides = x.strides();
  const int64_t offset = x.storage_offset() + index * strides[d];
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return record_view("SelectBackward0", x, make_view(x, shape, strides, offset),
                     functions::select_backward(x.shape(), d, index));
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  EMBER_CHECK(x.dim() >= 2, Error, "diagonal: expected a tensor with at least 2 dimensions, got shape ",
              shape_str(x.shape()));
  const int64_t d1 = wrap_dim(dim1, x.dim(), "diagonal");
  const int64_t d2 = wrap_dim(dim2, x.dim(), "diagonal");
  EMBER_CHECK(d1 != d2, Error, "diagonal: diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t rows = x.size(d1), cols = x.size(d2);
  const int64_t length = std::max<int64_t>(0, offset >= 0 ? std::min(rows, cols - offset)
                                                           : std::min(rows + offset, cols));
  int64_t start = x.storage_offset();
  if (length > 0) start += offset >= 0 ? offset * x.stride(d2) : -offset * x.stride(d1);
  Shape shape;
  Strides strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    shape.push_back(x.size(d));
    strides.push_back(x.stride(d));
  }
  shape.push_back(length);
  strides.push_back(x.stride(d1) + x.stride(d2));
  const Shape in_shape = x.shape();
  return record_view("DiagonalBackward0", x, make_view(x, shape, strides, start),
                     [in_shape, offset, d1, d2](const autograd::TensorList& g, const autograd::TensorList&,
                                                const std::vector<bool>&) {
                       return autograd::TensorList{diagonal_backward(g[0], in_shape, offset, d1, d2)};
                     });
}

Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step) {
  const int64_t nd = x.dim();
  const int64_t d = nd == 0 ? 0 : wrap_dim(dim, nd, "unfold");
  const int64_t extent = nd == 0 ? 1 : x.size(d);
  const int64_t stride = nd == 0 ? 1 : x.stride(d);
  EMBER_CHECK(size >= 0 && size <= extent, Error, "unfold: maximum size for tensor at dimension ", d, " is ", extent,
              " but size is ", size);
  EMBER_CHECK(step > 0, Error, "unfold: step is ", step, " but must be > 0");
  const int64_t windows = (extent - size) / step + 1;
  Shape shape = x.shape();
  Strides strides = x.strides();
  if (nd > 0) {
    shape[d] = windows;
    strides[d] = stride * step;
  }
  shape.push_back(size);
  strides.push_back(stride);
  const Shape in_shape = x.shape();
  auto backward = [in_shape, d, size, step, windows](const autograd::TensorList& g, const autograd::TensorList&,
                                                      const std::vector<bool>&) {
    const Tensor& grad = g[0];
    if (in_shape.empty()) {  // a 0-d input: one window of 1 element, or of none
      return autograd::TensorList{grad.numel() ? grad.reshape({}) : zeros({}, grad.dtype(), grad.device())};
    }
    // Put each window's elements next to its index (dims d and d + 1), then
    // add window w's element k into input position w * step + k.
    const int64_t nd_in = static_cast<int64_t>(in_shape.size());
    Dims order;
    for (int64_t i = 0; i <= d; ++i) order.push_back(i);
    order.push_back(nd_in);
    for (int64_t i = d + 1; i < nd_in; ++i) order.push_back(i);
    Shape merged = in_shape;
    merged[d] = windows * size;
    const Tensor flat = permute(grad, order).reshape(merged);
    if (step == size) {  // windows tile the dim without overlap: no sums, only the uncovered tail is zero
      const int64_t tail = in_shape[d] - windows * size;
      if (tail == 0) return autograd::TensorList{flat};
      Shape rest = in_shape;
      rest[d] = tail;
      return autograd::TensorList{cat({flat, zeros(rest, grad.dtype(), grad.device())}, d)};
    }
    const Tensor starts = arange(0, windows * step, step, DType::Int64, grad.device()).unsqueeze(1);
    const Tensor positions = add(starts, arange(0, size, 1, DType::Int64, grad.device())).reshape({-1});
    return autograd::TensorList{index_add(zeros(in_shape, grad.dtype(), grad.device()), d, positions, flat)};
  };
  return record_view("UnfoldBackward0", x, make_view(x, shape, strides, x.storage_offset()), backward);
}

Tensor as_strided(const Tensor& x, const Shape& size, const Strides& stride, std::optional<int64_t> storage_offset) {
  EMBER_CHECK(size.size() == stride.size(), Error, "as_strided: mismatch in length of strides and shape: size ",
              shape_str(size), ", stride ", shape_str(stride));
  const int64_t offset = storage_offset.value_or(x.storage_offset());
  EMBER_CHECK(offset >= 0, Error, "as_strided: negative storage offset ", offset, " is not supported");
  int64_t extent = 0;  // one past the last element read, for a non-empty view
  bool empty = false, overflow = __builtin_add_overflow(offset, 1, &extent);
  for (size_t d = 0; d < size.size(); ++d) {
    EMBER_CHECK(size[d] >= 0, Error, "as_strided: negative size ", size[d], " at dimension ", d);
    EMBER_CHECK(stride[d] >= 0, Error, "as_strided: negative strides are not supported, got ", shape_str(stride));
    empty = empty || size[d] == 0;
    int64_t span = 0;
    if (size[d] > 0) overflow = overflow || __builtin_mul_overflow(size[d] - 1, stride[d], &span) ||
                                __builtin_add_overflow(extent, span, &extent);
  }
  // Past int64 the extent would wrap around and pass the storage check below.
  EMBER_CHECK(empty || !overflow, Error, "as_strided: storage size calculation overflowed with sizes ",
              shape_str(size), ", strides ", shape_str(stride), " and storage offset ", offset);
  const int64_t storage_elements = static_cast<int64_t>(x.storage().nbytes() / x.element_size());
  EMBER_CHECK(empty || extent <= storage_elements, Error, "as_strided: sizes ", shape_str(size), ", strides ",
              shape_str(stride), " and storage offset ", offset, " need a storage of ", extent,
              " elements, but the tensor's storage holds ", storage_elements);
  const Shape in_shape = x.shape();
  const Strides in_strides = x.strides();
  const int64_t in_offset = x.storage_offset();
  auto backward = [=](const autograd::TensorList& g, const autograd::TensorList&, const std::vector<bool>&) {
    // Storage positions of the view's and of x's elements, then a scatter-add and a gather between them.
    const Tensor& grad = g[0];
    const Tensor positions = arange(0, storage_elements, 1, DType::Int64, grad.device());
    const Tensor read = make_view(positions, size, stride, offset).reshape({-1});
    const Tensor own = make_view(positions, in_shape, in_strides, in_offset).reshape({-1});
    const Tensor sums = index_add(zeros({storage_elements}, grad.dtype(), grad.device()), 0, read, grad.reshape({-1}));
    return autograd::TensorList{index_select(sums, 0, own).reshape(in_shape)};
  };
  return record_view("AsStridedBackward0", x, make_view(x, size, stride, offset), backward);
}

Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start_in, std::optional<int64_t> end_in,
             int64_t step) {
  EMBER_CHECK(x.dim() > 0, IndexError, "slice: cannot be applied to a 0-dim tensor");
  EMBER_CHECK(step > 0, ValueError, "slice: step must be greater than zero");
  const int64_t d = wrap_dim(dim, x.dim(), "slice");
  const int64_t size = x.size(d);
  // Python's clamping of slice bounds.
  auto clamp = [size](int64_t v) {
    if (v < 0) v += size;
    return v < 0 ? int64_t{0} : (v > size ? size : v);
  };
  const int64_t start = start_in ? clamp(*start_in) : 0;
  const int64_t end = std::max(start, end_in ? clamp(*end_in) : size);
  Shape shape = x.shape();
  Strides strides = x.strides();
  shape[d] = int_math::ceil_div(end - start, step);  // end - start + step - 1 may overflow
  const int64_t offset = x.storage_offset() + (shape[d] > 0 ? start * strides[d] : 0);
  // stride * step can only overflow when the step passes the dim's end (one
  // element or none), where the stride is never used: it then stays as it was.
  if (__builtin_mul_overflow(strides[d], step, &strides[d])) strides[d] = x.stride(d);
  return record_view("SliceBackward0", x, make_view(x, shape, strides, offset),
                     functions::slice_backward(x.shape(), d, start, step, shape[d]));
}

Tensor flip(const Tensor& x, const Dims& dims) {
  std::vector<bool> flipped(std::max<int64_t>(x.dim(), 1), false);  // a 0-d tensor accepts dim 0
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, x.dim(), "flip");
    EMBER_CHECK(!flipped[d], Error, "flip: dim ", d, " appears multiple times in the list of dims");
    flipped[d] = true;
  }
  EMBER_CHECK(x.device().is_cpu() || x.device().is_cuda(), NotImplementedError, "flip: no kernel for device ",
              x.device().str());
  // A negative-stride view of x read into a fresh tensor.
  Strides strides = x.strides();
  int64_t offset = x.storage_offset();
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (flipped[d] && x.size(d) > 0) {
      offset += (x.size(d) - 1) * strides[d];
      strides[d] = -strides[d];
    }
  }
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  index_kernels::gather(out, make_view(x, x.shape(), strides, offset), {}, {}, {});
  Dims wrapped;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (flipped[d]) wrapped.push_back(d);
  if (autograd::any_requires_grad({x})) {
    autograd::record("FlipBackward0", {x}, {out}, {}, functions::flip_backward(wrapped));
  }
  return out;
}

Tensor repeat(const Tensor& x, const Shape& repeats) {
  const int64_t nd = static_cast<int64_t>(repeats.size());
  EMBER_CHECK(nd >= x.dim(), Error, "repeat: number of dimensions of repeat dims (", nd,
              ") can not be smaller than number of dimensions of tensor (", x.dim(), ")");
  for (int64_t r : repeats) EMBER_CHECK(r >= 0, Error, "repeat: repeats must be non-negative, got ", shape_str(repeats));
  // [s0, s1] -> [1, s0, 1, s1] -> expand to [r0, s0, r1, s1] -> [r0*s0, r1*s1].
  Shape padded(nd - x.dim(), 1);
  padded.insert(padded.end(), x.shape().begin(), x.shape().end());
  Shape interleaved, expanded, out;
  for (int64_t i = 0; i < nd; ++i) {
    interleaved.insert(interleaved.end(), {1, padded[i]});
    expanded.insert(expanded.end(), {repeats[i], padded[i]});
    int64_t n;
    EMBER_CHECK(!__builtin_mul_overflow(repeats[i], padded[i], &n), Error, "repeat: repeats ", shape_str(repeats),
                " of a tensor of shape ", x.shape_str(), " give a size past int64");
    out.push_back(n);
  }
  return reshape(expand(reshape(x, interleaved), expanded).clone(), out);  // always a copy, as PyTorch
}

namespace {
Tensor tril_triu(const Tensor& x, int64_t diagonal, bool lower) {
  const char* name = lower ? "tril" : "triu";
  EMBER_CHECK(x.dim() >= 2, Error, name, ": input tensor must have at least 2 dimensions, got shape ",
              shape_str(x.shape()));
  EMBER_CHECK(x.device().is_cpu() || x.device().is_cuda(), NotImplementedError, name, ": no kernel for device ",
              x.device().str());
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  if (x.device().is_cuda()) cuda::tril_triu(out, x, diagonal, lower);
  else cpu::tril_triu(out, x, diagonal, lower);
  if (autograd::any_requires_grad({x})) {
    autograd::record(lower ? "TrilBackward0" : "TriuBackward0", {x}, {out}, {},
                     functions::tril_triu_backward(diagonal, lower));
  }
  return out;
}
}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) { return tril_triu(x, diagonal, true); }
Tensor triu(const Tensor& x, int64_t diagonal) { return tril_triu(x, diagonal, false); }

Tensor Tensor::view(const Shape& shape) const { return ember::view(*this, shape); }
Tensor Tensor::reshape(const Shape& shape) const { return ember::reshape(*this, shape); }
Tensor Tensor::expand(const Shape& shape) const { return ember::expand(*this, shape); }
Tensor Tensor::permute(const Dims& dims) const { return ember::permute(*this, dims); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return ember::transpose(*this, d0, d1); }
Tensor Tensor::t() const {
  EMBER_CHECK(dim() <= 2, Error, "t: expects a tensor with <= 2 dimensions, but self is ", dim(), "D");
  return dim() < 2 ? ember::view(*this, shape()) : ember::transpose(*this, 0, 1);
}
Tensor Tensor::unsqueeze(int64_t dim) const { return ember::unsqueeze(*this, dim); }
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(int64_t dim) const { return ember::squeeze(*this, dim); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  const int64_t s = wrap_dim(start_dim, dim(), "flatten"), e = wrap_dim(end_dim, dim(), "flatten");
  if (dim() == 0) return reshape({1});
  EMBER_CHECK(s <= e, Error, "flatten: start_dim cannot come after end_dim");
  Shape shape(this->shape().begin(), this->shape().begin() + s);
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= this->shape()[i];
  shape.push_back(n);
  shape.insert(shape.end(), this->shape().begin() + e + 1, this->shape().end());
  return reshape(shape);
}
Tensor Tensor::unflatten(int64_t dim, const Shape& sizes) const { return ember::unflatten(*this, dim, sizes); }
Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  return ember::narrow(*this, dim, start, length);
}
Tensor Tensor::select(int64_t dim, int64_t index) const { return ember::select(*this, dim, index); }
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return ember::slice(*this, dim, start, end, step);
}
Tensor Tensor::flip(const Dims& dims) const { return ember::flip(*this, dims); }
Tensor Tensor::repeat(const Shape& repeats) const { return ember::repeat(*this, repeats); }
Tensor Tensor::tril(int64_t diagonal) const { return ember::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return ember::triu(*this, diagonal); }

}  // namespace ember
