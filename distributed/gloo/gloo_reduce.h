// Elementwise reductions handed to gloo (out[i] = a[i] op b[i]), one per
// ReduceOp and dtype. float16/bfloat16 combine in float and round back, as
// everywhere else on the CPU; bool SUM/MAX is "or", PRODUCT/MIN is "and".
#pragma once
#include <algorithm>
#include <cstddef>
#include <functional>

#include <ember/core/dtype.h>
#include <ember/core/error.h>
#include <ember/core/int_math.h>
#include <ember/distributed/process_group.h>

namespace ember::distributed::gloo_detail {

using ReduceFn = std::function<void(void*, const void*, const void*, size_t)>;

// Float-typed arithmetic for the 16-bit storage types, native otherwise.
template <class T> struct Acc { using type = T; };
template <> struct Acc<Half> { using type = float; };
template <> struct Acc<BFloat16> { using type = float; };

template <class T, class F>
ReduceFn elementwise(F f) {
  return [f](void* out, const void* a, const void* b, size_t n) {
    using A = typename Acc<T>::type;
    T* o = static_cast<T*>(out);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = T(f(A(x[i]), A(y[i])));
  };
}

// AVG reduces with SUM; the caller divides by the group size afterwards.
template <class T>
ReduceFn reduce_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    // Integer sums and products wrap around on overflow, as PyTorch's do
    // (core/int_math.h); for floats these are the plain + and *.
    case ReduceOp::Avg: return elementwise<T>([](auto a, auto b) { return int_math::wrapping_add(a, b); });
    case ReduceOp::Product: return elementwise<T>([](auto a, auto b) { return int_math::wrapping_mul(a, b); });
    case ReduceOp::Min: return elementwise<T>([](auto a, auto b) { return std::min(a, b); });
    case ReduceOp::Max: return elementwise<T>([](auto a, auto b) { return std::max(a, b); });
  }
  throw Error("gloo: unknown reduce op");
}

template <>
inline ReduceFn reduce_fn<bool>(ReduceOp op) {
  if (op == ReduceOp::Sum || op == ReduceOp::Max)
    return elementwise<bool>([](bool a, bool b) { return a || b; });
  if (op == ReduceOp::Product || op == ReduceOp::Min)
    return elementwise<bool>([](bool a, bool b) { return a && b; });
  throw TypeError("ReduceOp.AVG is not defined for bool tensors");
}

// Divides n elements at p by `by` in place (the second half of AVG).
template <class T>
void divide(void* p, size_t n, int by) {
  T* x = static_cast<T*>(p);
  for (size_t i = 0; i < n; ++i) x[i] = T(static_cast<typename Acc<T>::type>(x[i]) / by);
}

}  // namespace ember::distributed::gloo_detail
