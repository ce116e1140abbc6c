// searchsorted: each value's insertion point by bisection over its row of
// the sorted sequence, values in parallel. Comparisons keep NaN (sorted last
// in the sequence) above every number: `s < v` and `s <= v` are false for a
// NaN s, so the search moves left of it.
#include <ember/core/cpu/search.h>

#include <cmath>
#include <type_traits>

#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

namespace {

template <class T>
using Cmp = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<Cmp<T>>) return std::isnan(static_cast<Cmp<T>>(v));
  return false;
}

}  // namespace

void searchsorted(Tensor& out, const Tensor& seq, const Tensor& values, int64_t seq_rows, int64_t rows, int64_t n,
                  int64_t m, bool right) {
  dispatch(seq.dtype(), "searchsorted", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Cmp<T>;
    const T* s = seq.data<T>();
    const T* v = values.data<T>();
    int64_t* o = out.data<int64_t>();
    parallel_for(0, rows * m, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T* row = s + (seq_rows == 1 ? 0 : i / m * n);
        const C x = static_cast<C>(v[i]);
        if (is_nan(v[i])) {
          o[i] = n;
          continue;
        }
        int64_t lo = 0, hi = n;
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo) / 2;
          const C y = static_cast<C>(row[mid]);
          if (right ? y <= x : y < x) lo = mid + 1;
          else hi = mid;
        }
        o[i] = lo;
      }
    });
  });
}

}  // namespace ember::cpu
