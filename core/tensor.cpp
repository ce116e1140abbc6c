#include <ember/core/tensor.h>

#include <algorithm>
#include <optional>

#include <ember/autograd/meta.h>
#include <ember/core/error.h>

namespace ember {

const Shape& Tensor::shape() const {
  EMBER_CHECK(impl_, Error, "tensor is undefined");
  return impl_->shape;
}

const Strides& Tensor::strides() const { return impl_->strides; }

int64_t Tensor::size(int64_t d) const {
  EMBER_CHECK(dim() > 0, IndexError, "size: dimension specified as ", d, " but tensor has no dimensions");
  return shape()[wrap_dim(d, dim(), "size")];
}
int64_t Tensor::stride(int64_t d) const {
  EMBER_CHECK(dim() > 0, IndexError, "stride: dimension specified as ", d, " but tensor has no dimensions");
  return strides()[wrap_dim(d, dim(), "stride")];
}
DType Tensor::dtype() const {
  EMBER_CHECK(impl_, Error, "tensor is undefined");
  return impl_->dtype;
}
Device Tensor::device() const { return impl_->storage.device(); }

bool Tensor::is_contiguous() const {
  // An empty tensor is contiguous whatever its strides (numpy gives empty
  // copies zero strides), as in PyTorch.
  for (int64_t s : impl_->shape)
    if (s == 0) return true;
  int64_t expected = 1;
  for (size_t i = impl_->shape.size(); i-- > 0;) {
    const int64_t s = impl_->shape[i];
    if (s == 1) continue;
    if (impl_->strides[i] != expected) return false;
    expected *= s;
  }
  return true;
}

void* Tensor::data_ptr() const {
  return static_cast<char*>(impl_->storage.data()) + impl_->offset * static_cast<int64_t>(itemsize(impl_->dtype));
}

Tensor empty(const Shape& shape, DType dtype, Device device) {
  for (auto s : shape) {
    EMBER_CHECK(s >= 0, ValueError, "empty: negative dimension in shape ", shape_str(shape));
  }
  size_t nbytes = 0;
  EMBER_CHECK(!__builtin_mul_overflow(static_cast<size_t>(numel_of(shape)), itemsize(dtype), &nbytes), Error,
              "empty: a ", dtype_name(dtype), " tensor of shape ", shape_str(shape), " needs more bytes than fit in memory");
  return Tensor(std::make_shared<TensorImpl>(Storage(nbytes, device), shape, contiguous_strides(shape), 0, dtype));
}

namespace {
// The strides of a fresh tensor laid out as t, when t covers its elements
// once without gaps in some order of its dims (sizes 1 aside) but not in
// row-major order; nullopt otherwise.
std::optional<Strides> permuted_dense_strides(const Tensor& t) {
  if (t.numel() <= 1 || t.is_contiguous()) return std::nullopt;
  const Shape& shape = t.shape();
  const Strides& strides = t.strides();
  std::vector<int64_t> dims;  // the dims of more than one element, innermost first
  for (int64_t d = 0; d < t.dim(); ++d)
    if (shape[d] > 1) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  Strides out(shape.size(), 0);
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (strides[d] != expected) return std::nullopt;  // a gap, an overlap or a negative stride
    out[d] = expected;
    expected *= shape[d];
  }
  for (int64_t d = t.dim() - 1, next = 1; d >= 0; --d) {  // size-1 dims: any stride works
    if (shape[d] == 1) out[d] = next;
    next = out[d] * shape[d];
  }
  return out;
}
}  // namespace

Tensor empty_like_operands(const Shape& shape, DType dtype, Device device, const std::vector<Tensor>& operands) {
  for (const Tensor& t : operands) {
    if (!t.defined() || t.shape() != shape) continue;
    const std::optional<Strides> strides = permuted_dense_strides(t);
    if (!strides) break;  // the first full-shape operand decides, as in PyTorch
    const size_t nbytes = static_cast<size_t>(numel_of(shape)) * itemsize(dtype);  // t's own size: it fits
    return Tensor(std::make_shared<TensorImpl>(Storage(nbytes, device), shape, *strides, 0, dtype));
  }
  return empty(shape, dtype, device);
}

Tensor make_view(const Tensor& base, Shape shape, Strides strides, int64_t offset) {
  numel_of(shape);  // throws when the element count overflows (e.g. a huge expand)
  auto impl = std::make_shared<TensorImpl>(base.storage(), std::move(shape), std::move(strides), offset,
                                           base.dtype());
  impl->is_view = true;
  impl->is_inference = base.impl()->is_inference;
  return Tensor(std::move(impl));
}

std::string describe(const Tensor& t) {
  if (!t.defined()) return "undefined tensor";
  return str(dtype_name(t.dtype()), " tensor of shape ", shape_str(t.shape()), " on ", t.device().str());
}

}  // namespace ember
