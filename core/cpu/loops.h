// The CPU elementwise loop: runs a scalar functor over a TensorIterator,
// splitting large ranges across threads, with fast paths the compiler
// vectorizes for contiguous operands and for a broadcast scalar.
#pragma once
#include <cstdint>
#include <tuple>
#include <utility>

#include <ember/core/cpu/parallel.h>
#include <ember/core/tensor_iterator.h>

namespace ember::cpu {

namespace detail {

template <class R, class... A, class F, size_t... I>
inline void map_row(char** ptrs, const int64_t* strides, int64_t n, F& f, std::index_sequence<I...>) {
  R* out = reinterpret_cast<R*>(ptrs[0]);
  const bool contiguous = strides[0] == sizeof(R) && ((strides[I + 1] == sizeof(A)) && ...);
  if (contiguous) {
    std::tuple<const A*...> in{reinterpret_cast<const A*>(ptrs[I + 1])...};
    for (int64_t i = 0; i < n; ++i) out[i] = f(std::get<I>(in)[i]...);
    return;
  }
  if constexpr (sizeof...(A) == 2) {
    // a (contiguous) op b (broadcast scalar): x + 1, x * w.
    if (strides[0] == sizeof(R) && strides[1] == sizeof(std::tuple_element_t<0, std::tuple<A...>>) &&
        strides[2] == 0) {
      using A0 = std::tuple_element_t<0, std::tuple<A...>>;
      using A1 = std::tuple_element_t<1, std::tuple<A...>>;
      const A0* a = reinterpret_cast<const A0*>(ptrs[1]);
      const A1 b = *reinterpret_cast<const A1*>(ptrs[2]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<R*>(ptrs[0] + i * strides[0]) =
        f(*reinterpret_cast<const A*>(ptrs[I + 1] + i * strides[I + 1])...);
  }
}

}  // namespace detail

// out = f(in...) elementwise. Operand 0 of `iter` has type R, operand i+1 type A_i.
template <class R, class... A, class F>
void map(const TensorIterator& iter, F f) {
  parallel_for(0, iter.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    iter.for_each_row(begin, end, [&](char** ptrs, const int64_t* strides, int64_t n) {
      detail::map_row<R, A...>(ptrs, strides, n, f, std::index_sequence_for<A...>{});
    });
  });
}

}  // namespace ember::cpu
