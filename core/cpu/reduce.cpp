#include <ember/core/cpu/reduce.h>

#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

namespace {

// Accumulator type: double for float64, float for float32, int64 for integers.
template <class T> struct Acc { using type = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>; };

template <class T>
void sum_kernel(T* out, const T* x, int64_t outer, int64_t reduced, int64_t inner, double scale) {
  using A = typename Acc<T>::type;
  if (inner == 1) {
    // Reduce along contiguous rows with several lanes so the loop vectorizes.
    parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(reduced, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* row = x + o * reduced;
        constexpr int L = 16;
        A lanes[L] = {};
        int64_t r = 0;
        for (; r + L <= reduced; r += L) {
          for (int l = 0; l < L; ++l) lanes[l] += static_cast<A>(row[r + l]);
        }
        A total = 0;
        for (int l = 0; l < L; ++l) total += lanes[l];
        for (; r < reduced; ++r) total += static_cast<A>(row[r]);
        out[o] = static_cast<T>(scale == 1.0 ? total : static_cast<A>(total * scale));
      }
    });
    return;
  }
  // Reduce across rows: accumulate whole rows of `inner` elements (vectorizes over inner).
  parallel_for(0, outer * inner, 32768, [&](int64_t b, int64_t e) {
    std::vector<A> acc;
    for (int64_t o = b / inner; o * inner < e; ++o) {
      const int64_t i0 = std::max(b, o * inner) - o * inner;
      const int64_t i1 = std::min(e, (o + 1) * inner) - o * inner;
      acc.assign(i1 - i0, A(0));
      for (int64_t r = 0; r < reduced; ++r) {
        const T* row = x + (o * reduced + r) * inner;
        for (int64_t i = i0; i < i1; ++i) acc[i - i0] += static_cast<A>(row[i]);
      }
      for (int64_t i = i0; i < i1; ++i) {
        out[o * inner + i] = static_cast<T>(scale == 1.0 ? acc[i - i0] : static_cast<A>(acc[i - i0] * scale));
      }
    }
  });
}

}  // namespace

void reduce(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  dispatch_math(x.dtype(), "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("sum: bool inputs are summed as int64; convert first");
    } else {
      const double scale = op == ReduceOp::Mean ? 1.0 / static_cast<double>(reduced) : 1.0;
      sum_kernel<T>(out.data<T>(), x.data<T>(), outer, reduced, inner, scale);
    }
  });
}

}  // namespace ember::cpu
