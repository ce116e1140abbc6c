// searchsorted: each value's insertion point by bisection over its row of
// the sorted sequence, values in parallel. The search moves right past an
// element s unless s >= v (s > v with right=True), as PyTorch's does: every
// comparison with NaN is false, so a NaN value lands after the whole row, and
// the search passes over any NaN of the row it meets, whatever the value
// (numpy orders NaN above every number instead: the two differ only for rows
// holding NaN).
#include <ember/core/cpu/search.h>

#include <type_traits>

#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

namespace {

template <class T>
using Cmp = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

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
        int64_t lo = 0, hi = n;
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo) / 2;
          const C y = static_cast<C>(row[mid]);
          if (right ? !(y > x) : !(y >= x)) lo = mid + 1;
          else hi = mid;
        }
        o[i] = lo;
      }
    });
  });
}

}  // namespace ember::cpu
