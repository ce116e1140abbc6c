// Complex tensors: the views between a complex tensor and its parts, building
// complex tensors from real ones, and the element copies and fills the core
// sends here. The arithmetic is in complex_math.cpp.
#include <ember/core/ops/complex.h>

#include <cmath>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/copy.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/float_checks.h>
#include <ember/core/ops/shape.h>
#include <ember/core/ops/unary.h>
#include <ember/core/ops/unary_math.h>
#include <ember/core/ops/view_dtype.h>
#include <ember/core/tensor_impl.h>
#include <ember/core/type_promotion.h>

namespace ember {

namespace {

// complex [..] -> float [.., 2], without autograd.
Tensor parts_view(const Tensor& z) {
  Shape shape = z.shape();
  Strides strides = z.strides();
  for (auto& s : strides) s *= 2;
  shape.push_back(2);
  strides.push_back(1);
  return retyped_view(z, complex_part_dtype(z.dtype()), shape, strides, z.storage_offset() * 2);
}

// float [.., 2] -> complex [..], without autograd; the caller checked the layout.
Tensor complex_view(const Tensor& x) {
  Shape shape(x.shape().begin(), x.shape().end() - 1);
  Strides strides(x.strides().begin(), x.strides().end() - 1);
  for (auto& s : strides) s /= 2;
  return retyped_view(x, complex_dtype_for(x.dtype()), shape, strides, x.storage_offset() / 2);
}

void check_complex_layout(const Tensor& x) {
  const char* op = "view_as_complex";
  EMBER_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, TypeError, op,
              ": expected a float32 or float64 tensor, got ", dtype_name(x.dtype()));
  EMBER_CHECK(x.dim() > 0 && x.shape().back() == 2, Error, op,
              ": tensor must have a last dimension of size 2, got shape ", shape_str(x.shape()));
  EMBER_CHECK(x.strides().back() == 1, Error, op, ": tensor must have a last dimension with stride 1, got strides ",
              shape_str(x.strides()), "; call .contiguous() first");
  for (int64_t d = 0; d + 1 < x.dim(); ++d) {
    EMBER_CHECK(x.strides()[d] % 2 == 0, Error, op,
                ": tensor must have a stride divisible by 2 for all but the last dimension, got strides ",
                shape_str(x.strides()), "; call .contiguous() first");
  }
  EMBER_CHECK(x.storage_offset() % 2 == 0, Error, op, ": tensor must have a storage offset divisible by 2, got ",
              x.storage_offset());
}

}  // namespace

Tensor view_as_real(const Tensor& z) {
  EMBER_CHECK(z.defined() && is_complex(z.dtype()), Error,
              "view_as_real: expected a complex tensor, got ", z.defined() ? dtype_name(z.dtype()) : "None");
  Tensor out = parts_view(z);
  if (autograd::any_requires_grad({z})) {
    autograd::record("ViewAsRealBackward0", {z}, {out}, {},
                     [](const autograd::TensorList& g, const autograd::TensorList&, const std::vector<bool>&) {
                       return autograd::TensorList{view_as_complex(g[0].contiguous())};
                     });
  }
  return out;
}

Tensor view_as_complex(const Tensor& x) {
  EMBER_CHECK(x.defined(), Error, "view_as_complex: expected a tensor, got None");
  check_complex_layout(x);
  Tensor out = complex_view(x);
  if (autograd::any_requires_grad({x})) {
    autograd::record("ViewAsComplexBackward0", {x}, {out}, {},
                     [](const autograd::TensorList& g, const autograd::TensorList&, const std::vector<bool>&) {
                       return autograd::TensorList{view_as_real(g[0])};
                     });
  }
  return out;
}

Tensor real(const Tensor& z) { return is_complex(z.dtype()) ? select(view_as_real(z), -1, 0) : z; }

Tensor imag(const Tensor& z) {
  EMBER_CHECK(is_complex(z.dtype()), Error, "imag is not implemented for tensors with non-complex dtypes (got ",
              dtype_name(z.dtype()), ")");
  return select(view_as_real(z), -1, 1);
}

Tensor complex(const Tensor& re, const Tensor& im) {
  EMBER_CHECK(re.defined() && im.defined(), Error, "complex: expected two tensors");
  EMBER_CHECK(re.dtype() == im.dtype(), TypeError, "complex: expected real and imag to have the same dtype, got ",
              dtype_name(re.dtype()), " and ", dtype_name(im.dtype()));
  EMBER_CHECK(re.dtype() == DType::Float32 || re.dtype() == DType::Float64, TypeError,
              "complex: expected float32 or float64 parts, got ", dtype_name(re.dtype()));
  common_device("complex", {re, im});
  const Shape shape = broadcast_shapes(re.shape(), im.shape(), "complex");
  return view_as_complex(stack({expand(re, shape), expand(im, shape)}, -1));
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  EMBER_CHECK(abs.defined() && angle.defined(), Error, "polar: expected two tensors");
  EMBER_CHECK(abs.dtype() == angle.dtype(), TypeError, "polar: expected abs and angle to have the same dtype, got ",
              dtype_name(abs.dtype()), " and ", dtype_name(angle.dtype()));
  EMBER_CHECK(abs.dtype() == DType::Float32 || abs.dtype() == DType::Float64, TypeError,
              "polar: expected float32 or float64 inputs, got ", dtype_name(abs.dtype()));
  return complex(ember::mul(abs, ember::cos(angle)), ember::mul(abs, ember::sin(angle)));
}

Tensor conj(const Tensor& z) {
  if (!is_complex(z.dtype())) return z;
  if (z.device().is_cpu()) return complex_ops::cpu_conj(z);
  return complex(real(z), ember::neg(imag(z)));
}

Tensor angle(const Tensor& z) {
  if (is_complex(z.dtype())) return atan2(imag(z), real(z));
  // Real input: 0 for x >= 0, pi for x < 0, NaN kept; no gradient (as PyTorch's).
  const Tensor x = is_floating(z.dtype()) ? z.detach() : z.to(default_float_dtype());
  const Tensor pi = full({}, M_PI, x.dtype(), x.device());
  return where(ember::isnan(x), x, where(lt(x, zeros({}, x.dtype(), x.device())), pi, zeros_like(pi)));
}

namespace complex_ops {

bool any_complex(const std::vector<Tensor>& ts) {
  for (const auto& t : ts)
    if (t.defined() && is_complex(t.dtype())) return true;
  return false;
}

void copy(Tensor& dst, const Tensor& src, bool non_blocking) {
  NoGradGuard no_grad;
  if (dst.device() != src.device() && src.dtype() != dst.dtype()) {
    // Convert where the data is, then move the bits.
    Tensor converted = empty(src.shape(), dst.dtype(), src.device());
    copy(converted, src, false);
    copy(dst, converted, non_blocking);
    return;
  }
  if (is_complex(dst.dtype()) && is_complex(src.dtype())) {
    // Same dtype on the CPU: a transposed or expanded layout moves whole
    // elements; through the parts view a transpose ran element by element.
    if (dst.dtype() == src.dtype() && dst.device().is_cpu() && src.device().is_cpu() && dst.numel() > 0 &&
        cpu::copy_layout(dst, src)) {
      return;
    }
    Tensor d = parts_view(dst);
    ember::copy_(d, parts_view(src), non_blocking);
  } else if (is_complex(dst.dtype())) {
    Tensor d = parts_view(dst);
    Tensor re = select(d, -1, 0), im = select(d, -1, 1);
    ember::copy_(re, src, non_blocking);
    im.fill_(0);
  } else if (dst.dtype() == DType::Bool) {
    ember::copy_(dst, complex_ops::ne(src, zeros({}, DType::Float32, src.device())), non_blocking);
  } else {
    ember::copy_(dst, select(parts_view(src), -1, 0), non_blocking);
  }
}

void fill(Tensor& z, double value) {
  NoGradGuard no_grad;
  Tensor d = parts_view(z);
  select(d, -1, 0).fill_(value);
  select(d, -1, 1).fill_(0);
}

}  // namespace complex_ops

}  // namespace ember
