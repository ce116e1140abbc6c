// Definitions of cuda/binary_typed.h's kernels: the device functor of each op
// (its formula, in cuda/device/binary_ops.cuh) run by the elementwise launcher
// (cuda/device/loops.cuh). Included only by the files that instantiate them.
#pragma once
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/binary_typed.h>
#include <ember/cuda/device/binary_ops.cuh>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/math.cuh>

namespace ember::cuda::binary_typed {

namespace detail {

using namespace binary_ops;

// Arithmetic in T on operands stored as S.
template <class T, class S = T>
void arithmetic(BinaryOp op, const TensorIterator& it, const Scalar& alpha) {
  if (!visit_arithmetic<T>(op, alpha, [&](auto f) { launch<S, S, S>(it, stored2_as<S, T>(f)); })) {
    throw Error("binary: unsupported op for this dtype");
  }
}

inline void bool_arithmetic(BinaryOp op, const TensorIterator& it, const Scalar& alpha) {
  if (!visit_bool_arithmetic(op, alpha, [&](auto f) { launch<bool, bool, bool>(it, f); })) {
    throw TypeError("binary: this arithmetic op is not supported on bool tensors");
  }
}

template <class T>
void compare(BinaryOp op, const TensorIterator& it) {
  if (!visit_compare<T>(op, [&](auto f) { launch<bool, T, T>(it, f); })) throw Error("binary: not a comparison");
}

}  // namespace detail

template <class T>
void run(BinaryOp op, const TensorIterator& it, const Scalar& alpha) {
  if (is_bool_result(op)) {
    detail::compare<T>(op, it);
  } else if constexpr (std::is_same_v<T, bool>) {
    detail::bool_arithmetic(op, it, alpha);
  } else {
    detail::arithmetic<T>(op, it, alpha);
  }
}

template <class S>
void run_half(BinaryOp op, const TensorIterator& it, const Scalar& alpha) {
  detail::arithmetic<float, S>(op, it, alpha);
}

template <class S>
void run_half_number(BinaryOp op, const TensorIterator& it, const Scalar& alpha, bool number_first) {
  using namespace binary_ops;
  const auto run = [&](auto f) {
    using F = decltype(f);
    if (number_first) launch<S, float, S>(it, NumberThenWidened<S, F>{f});
    else launch<S, S, float>(it, WidenedThenNumber<S, F>{f});
  };
  const float s = alpha.to<float>();
  switch (op) {  // the four ops only: each one is a kernel of its own
    case BinaryOp::Add: return s == 1.0f ? run(Add<float>{}) : run(AddScaled<float>{s});
    case BinaryOp::Sub: return s == 1.0f ? run(Sub<float>{}) : run(SubScaled<float>{s});
    case BinaryOp::Mul: return run(Mul<float>{});
    case BinaryOp::Div: return run(Div<float>{});
    default:
      throw Error("binary: a float number with a half tensor reached an op that takes it rounded (internal error)");
  }
}

}  // namespace ember::cuda::binary_typed
