// Definitions of cuda/unary_typed.h's kernels: the device functor of each op
// (its formula, in cuda/device/unary_ops.cuh) run by the elementwise launcher
// (cuda/device/loops.cuh). Included only by the files that instantiate them.
#pragma once
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/math.cuh>
#include <ember/cuda/device/unary_ops.cuh>
#include <ember/cuda/unary_typed.h>

namespace ember::cuda::unary_typed {

namespace detail {

// The op in T on operands stored as S.
template <class T, class S = T>
void unary(UnaryOp op, const TensorIterator& it) {
  if (unary_ops::visit_unary<T>(op, [&](auto f) { launch<S, S>(it, unary_ops::stored_as<S, T>(f)); })) return;
  if constexpr (std::is_same_v<T, bool>) throw TypeError("unary: this op does not support bool tensors");
  else if constexpr (std::is_floating_point_v<T>) throw Error("unary: unsupported op for floating dtypes");
  else throw TypeError("unary: this op needs a floating point tensor");
}

}  // namespace detail

template <class T>
void run(UnaryOp op, const TensorIterator& it) {
  detail::unary<T>(op, it);
}

template <class S>
void run_half(UnaryOp op, const TensorIterator& it) {
  detail::unary<float, S>(op, it);
}

}  // namespace ember::cuda::unary_typed
