// Spreading the CPU FFT's blocks of transforms over threads (internal to
// core/cpu/fft_*.cpp).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>

#include <ember/core/cpu/parallel.h>

namespace ember::cpu::fft {

// Calls body(g, scratch) for every g in [0, groups), on as many threads as
// give each at least `grain` groups. Threads claim the next group when done
// with their last, rather than a fixed share: a thread the OS runs late (the
// cores are shared) leaves its groups to the others instead of holding up
// the call. scratch is a pointer from make_scratch(), one per thread, kept
// alive while the thread runs.
template <class MakeScratch, class Body>
void for_each_claimed(int64_t groups, int64_t grain, const MakeScratch& make_scratch, const Body& body) {
  if (groups <= 0) return;
  const int64_t threads = std::clamp<int64_t>(groups / std::max<int64_t>(grain, 1), 1, get_num_threads());
  std::atomic<int64_t> next{0};
  parallel_for(0, threads, 1, [&](int64_t, int64_t) {
    auto scratch = make_scratch();
    for (int64_t g = next.fetch_add(1, std::memory_order_relaxed); g < groups;
         g = next.fetch_add(1, std::memory_order_relaxed)) {
      body(g, scratch.get());
    }
  });
}

}  // namespace ember::cpu::fft
