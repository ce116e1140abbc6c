// CUDA kernels of the binary family: the device functor of each op (its
// formula, in cuda/device/binary_ops.cuh) run by the elementwise launcher
// (cuda/device/loops.cuh). Arithmetic and comparisons dispatch to
// cuda/binary_typed.h's kernels, compiled per dtype family in other files;
// arithmetic also takes float16/bfloat16 tensors directly, computing in
// float. where and masked_fill only move values, so they run on every dtype
// as unsigned integers of its size.
#include <ember/cuda/binary.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/binary_typed.h>
#include <ember/cuda/device/binary_ops.cuh>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/math.cuh>
#include <ember/cuda/unary.h>

namespace ember::cuda {

namespace {

using namespace binary_ops;

template <class T>
void logical_not_typed(const TensorIterator& it) {
  launch<bool, T>(it, LogicalNot<T>{});
}

template <class T>
void bitwise_not_typed(const TensorIterator& it) {
  if constexpr (std::is_same_v<T, bool>) {
    launch<bool, bool>(it, BoolNot{});
  } else if constexpr (std::is_integral_v<T>) {
    launch<T, T>(it, BitNot<T>{});
  } else {
    throw TypeError("bitwise_not: only integral and bool tensors are supported");
  }
}

template <class T>
void lerp_typed(const TensorIterator& it) {
  if constexpr (std::is_floating_point_v<T>) {
    launch<T, T, T, T>(it, Lerp<T>{});
  } else {
    throw TypeError("lerp: only floating point tensors are supported");
  }
}

template <class U>
void where_bits(const TensorIterator& it) {
  launch<U, bool, U, U>(it, Select<U>{});
}

template <class U>
void masked_fill_bits(const TensorIterator& it, U v) {
  launch<U, U, bool>(it, FillWhere<U>{v});
}

template <class T>
T scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(s.to_double()));
  else return s.to<T>();
}

}  // namespace

void binary(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(a, out), y = kernel_operand(b, out);
  TensorIterator it({out, x, y});
  if (it.numel() == 0) return;
  // A float number with a half tensor (core/ops/binary.cpp passes it so for add, sub, mul and div).
  const auto float_number = [&](const Tensor& t) { return t.device().is_cpu() && t.dtype() == DType::Float32; };
  if (is_half(out.dtype()) && takes_float_number(op) && (float_number(x) || float_number(y))) {
    if (out.dtype() == DType::Float16) return binary_typed::run_half_number<__half>(op, it, alpha, float_number(x));
    return binary_typed::run_half_number<__nv_bfloat16>(op, it, alpha, float_number(x));
  }
  if (!is_bool_result(op) && a.dtype() == DType::Float16) return binary_typed::run_half<__half>(op, it, alpha);
  if (!is_bool_result(op) && a.dtype() == DType::BFloat16) {
    return binary_typed::run_half<__nv_bfloat16>(op, it, alpha);
  }
  dispatch_math(a.dtype(), "binary",
                [&](auto tag) { binary_typed::run<typename decltype(tag)::type>(op, it, alpha); });
}

void logical_not(Tensor& out, const Tensor& a) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(a, out);
  TensorIterator it({out, x});
  if (it.numel() == 0) return;
  dispatch_math(a.dtype(), "logical_not", [&](auto tag) { logical_not_typed<typename decltype(tag)::type>(it); });
}

void bitwise_not(Tensor& out, const Tensor& a) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(a, out);
  TensorIterator it({out, x});
  if (it.numel() == 0) return;
  dispatch_math(a.dtype(), "bitwise_not", [&](auto tag) { bitwise_not_typed<typename decltype(tag)::type>(it); });
}

void where(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  DeviceGuard guard(out.device().index);
  const Tensor c = kernel_operand(cond, out), x = kernel_operand(a, out), y = kernel_operand(b, out);
  TensorIterator it({out, c, x, y});
  if (it.numel() == 0) return;
  switch (itemsize(out.dtype())) {
    case 1: return where_bits<uint8_t>(it);
    case 2: return where_bits<uint16_t>(it);
    case 4: return where_bits<uint32_t>(it);
    case 8: return where_bits<uint64_t>(it);
  }
  throw NotImplementedError(str("where: no CUDA kernel for ", dtype_name(out.dtype()), " elements"));
}

void lerp(Tensor& out, const Tensor& start, const Tensor& end, const Tensor& weight) {
  DeviceGuard guard(out.device().index);
  const Tensor s = kernel_operand(start, out), e = kernel_operand(end, out), w = kernel_operand(weight, out);
  TensorIterator it({out, s, e, w});
  if (it.numel() == 0) return;
  dispatch_math(out.dtype(), "lerp", [&](auto tag) { lerp_typed<typename decltype(tag)::type>(it); });
}

void masked_fill(Tensor& out, const Tensor& self, const Tensor& mask, const Scalar& value) {
  DeviceGuard guard(out.device().index);
  const Tensor x = kernel_operand(self, out), m = kernel_operand(mask, out);
  TensorIterator it({out, x, m});
  if (it.numel() == 0) return;
  dispatch(out.dtype(), "masked_fill", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using U = typename Bits<sizeof(T)>::type;
    const T v = scalar_as<T>(value);
    U bits;
    std::memcpy(&bits, &v, sizeof(T));
    masked_fill_bits<U>(it, bits);
  });
}

}  // namespace ember::cuda
