// One loop shape shared by the CPU reduction kernels that need a whole column
// per output (two passes, scans, arg-extremes): over a contiguous
// [outer, reduced, inner] block, calls f(index, column, stride) for each of
// the outer*inner outputs, where column[r * stride] is element r.
#pragma once
#include <algorithm>
#include <cstdint>

#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

template <class T, class F>
void for_each_column(const T* x, int64_t outer, int64_t reduced, int64_t inner, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(reduced, 1));
  parallel_for(0, outer * inner, grain, [&](int64_t b, int64_t e) {
    for (int64_t idx = b; idx < e; ++idx) {
      const int64_t o = idx / inner, i = idx % inner;
      f(idx, x + o * reduced * inner + i, inner);
    }
  });
}

}  // namespace ember::cpu
