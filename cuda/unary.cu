// CUDA kernels of the unary family: the device functor of each op (its
// formula, in cuda/device/unary_ops.cuh) run by the elementwise launcher
// (cuda/device/loops.cuh). The plain unary ops also take float16/bfloat16
// tensors directly, computing in float. Semantics follow core/cpu/unary.cpp.
#include <ember/cuda/unary.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/copy.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/math.cuh>
#include <ember/cuda/device/unary_ops.cuh>

namespace ember::cuda {

namespace {

using namespace unary_ops;

template <class T, class S = T>
void unary_typed(UnaryOp op, const TensorIterator& it) {
  if (visit_unary<T>(op, [&](auto f) { launch<S, S>(it, stored_as<S, T>(f)); })) return;
  if constexpr (std::is_same_v<T, bool>) throw TypeError("unary: this op does not support bool tensors");
  else if constexpr (std::is_floating_point_v<T>) throw Error("unary: unsupported op for floating dtypes");
  else throw TypeError("unary: this op needs a floating point tensor");
}

template <class T>
void softplus_typed(const TensorIterator& it, double beta, double threshold) {
  if (!visit_softplus<T>(beta, threshold, [&](auto f) { launch<T, T>(it, f); })) {
    throw TypeError("softplus: needs a floating point tensor");
  }
}

template <class T>
void clamp_typed(const TensorIterator& it, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  visit_clamp<T>(lo, hi, [&](auto f) { launch<T, T>(it, f); });
}

template <class T>
void clamp_tensor_typed(Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi) {
  if (lo.defined() && hi.defined()) {
    launch<T, T, T, T>(TensorIterator({out, in, lo, hi}), ClampTensorBoth<T>{});
  } else if (lo.defined()) {
    launch<T, T, T>(TensorIterator({out, in, lo}), ClampTensorMin<T>{});
  } else {
    launch<T, T, T>(TensorIterator({out, in, hi}), ClampTensorMax<T>{});
  }
}

template <class T>
void pow_scalar_typed(const TensorIterator& it, const Scalar& exponent) {
  if (!visit_pow_scalar<T>(exponent, [&](auto f) { launch<T, T>(it, f); })) {
    throw TypeError("pow: bool tensors are not supported");
  }
}

template <class T>
void pow_typed(const TensorIterator& it) {
  if (!visit_pow<T>([&](auto f) { launch<T, T, T>(it, f); })) throw TypeError("pow: bool tensors are not supported");
}

template <class T>
void nan_to_num_typed(const TensorIterator& it, double nan, double posinf, double neginf) {
  visit_nan_to_num<T>(nan, posinf, neginf, [&](auto f) { launch<T, T>(it, f); });
}

template <class T>
void in_range_mask_typed(const TensorIterator& it, std::optional<double> lo, std::optional<double> hi) {
  if (!visit_in_range_mask<T>(lo, hi, [&](auto f) { launch<T, T>(it, f); })) {
    throw TypeError("in_range_mask: needs a floating point tensor");
  }
}

template <class T>
void isfinite_mask_typed(const TensorIterator& it) {
  if constexpr (std::is_floating_point_v<T>) {
    launch<T, T>(it, IsFinite<T>{});
  } else {
    throw TypeError("isfinite_mask: needs a floating point tensor");
  }
}

template <class T>
void keep_where_typed(const TensorIterator& it) {
  launch<T, T, T>(it, KeepWhere<T>{});
}

// Runs `call` with T the C++ type of `dtype` (a math dtype).
#define EMBER_CUDA_DISPATCH_MATH(dtype, name, call)      \
  dispatch_math(dtype, name, [&](auto tag) {             \
    using T = typename decltype(tag)::type;              \
    call;                                                \
  })

}  // namespace

Tensor kernel_operand(const Tensor& t, const Tensor& like) {
  if (!t.defined() || t.device() == like.device()) return t;
  // A number (the 2 of x * 2) stays on the CPU: the elementwise launcher
  // passes its value in the kernel's arguments (no fill kernel, no copy).
  if (t.device().is_cpu() && t.dim() == 0) return t;
  return t.to(like.device());
}

void unary(UnaryOp op, Tensor& out, const Tensor& in) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  if (out.dtype() == DType::Float16) return unary_typed<float, __half>(op, it);
  if (out.dtype() == DType::BFloat16) return unary_typed<float, __nv_bfloat16>(op, it);
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "unary", unary_typed<T>(op, it));
}

void softplus(Tensor& out, const Tensor& in, double beta, double threshold) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "softplus", softplus_typed<T>(it, beta, threshold));
}

void clamp(Tensor& out, const Tensor& in, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "clamp", clamp_typed<T>(it, lo, hi));
}

void clamp_tensor(Tensor& out, const Tensor& in, const Tensor& lo, const Tensor& hi) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out), l = kernel_operand(lo, out), h = kernel_operand(hi, out);
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "clamp", clamp_tensor_typed<T>(out, x, l, h));
}

void pow_scalar(Tensor& out, const Tensor& in, const Scalar& exponent) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "pow", pow_scalar_typed<T>(it, exponent));
}

void pow(Tensor& out, const Tensor& base, const Tensor& exponent) {
  DeviceGuard guard(out.device().index);
  const Tensor b = kernel_operand(base, out), e = kernel_operand(exponent, out);
  TensorIterator it({out, b, e});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "pow", pow_typed<T>(it));
}

void nan_to_num(Tensor& out, const Tensor& in, double nan, double posinf, double neginf) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "nan_to_num", nan_to_num_typed<T>(it, nan, posinf, neginf));
}

void in_range_mask(Tensor& out, const Tensor& in, std::optional<double> lo, std::optional<double> hi) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "in_range_mask", in_range_mask_typed<T>(it, lo, hi));
}

void isfinite_mask(Tensor& out, const Tensor& in) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "isfinite_mask", isfinite_mask_typed<T>(it));
}

void keep_where(Tensor& out, const Tensor& value, const Tensor& keep) {
  DeviceGuard guard(out.device().index);
  const Tensor v = kernel_operand(value, out), k = kernel_operand(keep, out);
  TensorIterator it({out, v, k});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "keep_where", keep_where_typed<T>(it));
}

}  // namespace ember::cuda
