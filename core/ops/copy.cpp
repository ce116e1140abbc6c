// Copies and conversions. Differentiable: to(dtype), clone, contiguous, copy_.
#include <ember/core/ops/copy.h>

#include <utility>

#include <ember/core/ops/complex.h>
#include <ember/core/scalar_fits.h>

#include <ember/autograd/functions/copy.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/meta.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/copy.h>
#include <ember/core/cpu/factory.h>
#include <ember/core/error.h>
#include <ember/core/tensor_impl.h>
#include <ember/cuda/copy.h>
#include <ember/cuda/cuda_api.h>

namespace ember {

namespace functions = autograd::functions;

namespace {
void copy_kernel(Tensor& dst, const Tensor& src, bool non_blocking = false) {
  if (is_complex(dst.dtype()) || is_complex(src.dtype())) {
    complex_ops::copy(dst, src, non_blocking);
  } else if (dst.device().is_cpu() && src.device().is_cpu()) {
    cpu::copy(dst, src);
  } else {
    cuda::copy(dst, src, non_blocking);
  }
}

// Whether src's elements may share memory with dst's (same device, byte
// ranges that intersect): a copy then reads what it has already written.
bool may_overlap(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0 || src.numel() == 0 || dst.device() != src.device()) return false;
  auto range = [](const Tensor& t) {
    const char* base = static_cast<const char*>(t.data_ptr());
    int64_t lo = 0, hi = 0;
    for (int64_t d = 0; d < t.dim(); ++d) (t.stride(d) < 0 ? lo : hi) += (t.size(d) - 1) * t.stride(d);
    const int64_t item = static_cast<int64_t>(t.element_size());
    return std::pair<const char*, const char*>{base + lo * item, base + (hi + 1) * item};
  };
  const auto [d0, d1] = range(dst);
  const auto [s0, s1] = range(src);
  return d0 < s1 && s0 < d1;
}
}  // namespace

void check_no_internal_overlap(const Tensor& self, const char* op) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    EMBER_CHECK(self.stride(d) != 0 || self.size(d) <= 1, Error, op,
                ": unsupported operation: more than one element of the written-to tensor refers to a single "
                "memory location (shape ", shape_str(self.shape()), ", strides ", shape_str(self.strides()),
                "). Please clone() the tensor before performing the operation.");
  }
}

Tensor& copy_(Tensor& dst, const Tensor& src, bool non_blocking) {
  broadcast_shapes(dst.shape(), src.shape(), "copy_");
  EMBER_CHECK(numel_of(broadcast_shapes(dst.shape(), src.shape(), "copy_")) == dst.numel(), Error,
              "copy_: source of shape ", shape_str(src.shape()), " cannot be broadcast to ",
              shape_str(dst.shape()));
  autograd::check_inplace(dst, "copy_");
  check_no_internal_overlap(dst, "copy_");
  if (src.is_same(dst)) return dst;
  const bool grad = autograd::any_requires_grad({dst, src});
  // z.copy_(z.t()) and other overlapping views: read from a copy of src (torch raises instead).
  const bool same_layout = src.data_ptr() == dst.data_ptr() && src.strides() == dst.strides() &&
                           src.shape() == dst.shape() && src.dtype() == dst.dtype();
  copy_kernel(dst, may_overlap(dst, src) && !same_layout ? src.detach().clone() : src, non_blocking);
  dst.bump_version();
  if (grad) {
    // History: dst now equals src broadcast and cast.
    Tensor result = make_view(dst, dst.shape(), dst.strides(), dst.storage_offset());
    autograd::record("CopyBackwards", {dst.detach(), src}, {result}, {}, functions::copy_backward());
    autograd::rebase_history(dst, result);
  }
  return dst;
}

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) { return ember::copy_(*this, src, non_blocking); }

Tensor to_dtype(const Tensor& t, DType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out = empty(t.shape(), dtype, t.device());
  copy_kernel(out, t);
  if (is_differentiable(dtype) && autograd::any_requires_grad({t})) {
    autograd::record("ToCopyBackward0", {t}, {out}, {}, functions::to_backward(t.device()));
  }
  return out;
}

Tensor Tensor::to(DType dtype, bool copy) const { return to_dtype(*this, dtype, copy); }

Tensor Tensor::to(Device device, bool copy) const { return to(device, dtype(), false, copy); }

namespace {
// An uninitialised contiguous CPU tensor in page-locked memory.
Tensor empty_pinned(const Shape& shape, DType dtype) {
  const size_t nbytes = static_cast<size_t>(numel_of(shape)) * itemsize(dtype);
  std::shared_ptr<void> memory = cuda::host_allocate(nbytes);
  return Tensor(std::make_shared<TensorImpl>(Storage(memory.get(), nbytes, kCPU, memory), shape,
                                             contiguous_strides(shape), 0, dtype));
}
}  // namespace

Tensor Tensor::to(Device device, DType dtype, bool non_blocking, bool copy) const {
  if (device == this->device()) return to_dtype(*this, dtype, copy);
  // A non_blocking copy to the host lands in pinned memory, as PyTorch's, so
  // that it need not wait: the caller synchronizes before reading it.
  const bool pinned_out = non_blocking && device.is_cpu() && this->device().is_cuda();
  Tensor out = pinned_out ? empty_pinned(shape(), dtype) : empty(shape(), dtype, device);
  copy_kernel(out, *this, non_blocking);
  if (is_differentiable(dtype) && autograd::any_requires_grad({*this})) {
    autograd::record("ToCopyBackward0", {*this}, {out}, {}, functions::to_backward(this->device()));
  }
  return out;
}

Tensor Tensor::pin_memory() const {
  EMBER_CHECK(device().is_cpu(), Error, "pin_memory: cannot pin a ", device().str(),
              " tensor: only CPU tensors can be pinned");
  if (is_pinned()) return *this;
  Tensor out = empty_pinned(shape(), dtype());
  return ember::copy_(out, *this);  // differentiable: the gradient passes through
}

bool Tensor::is_pinned() const {
  return device().is_cpu() && storage().defined() && cuda::is_pinned(storage().data());
}

Tensor Tensor::clone() const { return to_dtype(*this, dtype(), /*copy=*/true); }

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

Tensor& assign_inplace(Tensor& self, const Tensor& result) {
  {
    autograd::NoGradGuard no_grad;
    copy_(self, result);  // bumps the version
  }
  autograd::rebase_history(self, result.dtype() == self.dtype() ? result : result.to(self.dtype()));
  return self;
}

Tensor& Tensor::fill_(const Scalar& value) {
  autograd::check_inplace(*this, "fill_");
  check_scalar_fits(value, dtype(), "fill_");
  if (is_complex(dtype())) complex_ops::fill(*this, value.to_double());
  else if (device().is_cuda()) cuda::fill(*this, value);
  else cpu::fill(*this, value);
  bump_version();
  autograd::rebase_history(*this, Tensor());  // a constant now
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

Scalar Tensor::item() const {
  EMBER_CHECK(numel() == 1, Error, "item: a Tensor with ", numel(),
              " elements cannot be converted to Scalar (shape ", ember::shape_str(shape()), ")");
  Tensor c = device().is_cpu() ? *this : cpu();
  return dispatch(dtype(), "item", [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    const T v = *c.data<T>();
    if constexpr (std::is_same_v<T, bool>) return Scalar(v);
    else if constexpr (std::is_integral_v<T>) return Scalar(static_cast<int64_t>(v));
    else if constexpr (std::is_same_v<T, double>) return Scalar(v);
    else return Scalar(static_cast<double>(static_cast<float>(v)));
  });
}

}  // namespace ember
