// Splitting CPU work across threads (OpenMP when available).
#pragma once
#include <algorithm>
#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ember::cpu {

// Elementwise ops below this many elements run on one thread: the fork costs more.
constexpr int64_t kElementwiseGrain = 32768;

int get_num_threads();
void set_num_threads(int n);

// Calls f(begin, end) over [begin, end) in chunks of at least `grain`, in parallel.
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  const int64_t n = end - begin;
  if (n <= 0) return;
#ifdef _OPENMP
  const int threads = get_num_threads();
  if (n > grain && threads > 1 && !omp_in_parallel()) {
    const int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t b = begin + n * c / chunks;
      const int64_t e = begin + n * (c + 1) / chunks;
      f(b, e);
    }
    return;
  }
#endif
  f(begin, end);
}

}  // namespace ember::cpu
