// CUDA kernels of the unary family: the device functor of each op (its
// formula, in cuda/device/unary_ops.cuh) run by the elementwise launcher
// (cuda/device/loops.cuh). The plain unary ops dispatch to
// cuda/unary_typed.h's kernels, compiled per dtype family in other files; they
// also take float16/bfloat16 tensors directly, computing in float. Semantics
// follow core/cpu/unary.cpp.
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
#include <ember/cuda/unary_typed.h>

namespace ember::cuda {

namespace {

using namespace unary_ops;

template <class T>
void softplus_typed(const TensorIterator& it, double beta, double threshold) {
  if (!visit_softplus<T>(beta, threshold, [&](auto f) { launch<T, T>(it, f); })) {
    throw TypeError("softplus: needs a floating point tensor");
  }
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
  if (out.dtype() == DType::Float16) return unary_typed::run_half<__half>(op, it);
  if (out.dtype() == DType::BFloat16) return unary_typed::run_half<__nv_bfloat16>(op, it);
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "unary", unary_typed::run<T>(op, it));
}

void softplus(Tensor& out, const Tensor& in, double beta, double threshold) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(in, out);
  TensorIterator it({out, x});
  EMBER_CUDA_DISPATCH_MATH(out.dtype(), "softplus", softplus_typed<T>(it, beta, threshold));
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
