// Shape ops and views, with their backward formulas inline: each is a few
// lines of other shape ops.
#include <ember/core/ops/shape.h>

#include <algorithm>

#include <ember/autograd/functions/shape.h>
#include <ember/autograd/node.h>
#include <ember/core/error.h>
#include <ember/core/ops/reduce.h>

namespace ember {

namespace functions = autograd::functions;

Shape infer_shape(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      EMBER_CHECK(infer < 0, Error, op, ": only one dimension can be inferred in shape ", shape_str(shape));
      infer = static_cast<int>(i);
    } else {
      EMBER_CHECK(out[i] >= 0, Error, op, ": invalid shape dimension ", out[i], " in ", shape_str(shape));
      known *= out[i];
    }
  }
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
  if (nd == 0) return view(x, {});
  const int64_t a = wrap_dim(dim0, nd, "transpose"), b = wrap_dim(dim1, nd, "transpose");
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
  if (dim() == 0) return reshape({1});
  const int64_t s = wrap_dim(start_dim, dim(), "flatten"), e = wrap_dim(end_dim, dim(), "flatten");
  EMBER_CHECK(s <= e, Error, "flatten: start_dim cannot come after end_dim");
  Shape shape(this->shape().begin(), this->shape().begin() + s);
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= this->shape()[i];
  shape.push_back(n);
  shape.insert(shape.end(), this->shape().begin() + e + 1, this->shape().end());
  return reshape(shape);
}

}  // namespace ember
