// gloo's TCP device runs an epoll loop on a thread of its own. When a peer's
// data arrives while a collective's thread holds that pair's lock (sending a
// segment), the loop cannot take the lock and polls again at once: a spin
// until the lock is free. Woken at normal priority, the loop thread preempts
// the lock holder when both share a core and spins through its time slice,
// which stalled each 1 MiB all_reduce by ~4 ms on a 2-core machine.
// SCHED_BATCH never preempts on wakeup, so the lock holder runs on.
#pragma once
#include <set>

namespace ember::distributed {

// The ids of this process's threads (empty where /proc is not available).
std::set<long> thread_ids();
// Puts the threads started since `before` under SCHED_BATCH, unless
// EMBER_GLOO_LOOP_BATCH=0. Linux only; a no-op elsewhere or on failure (it is
// a scheduling hint, never needed for correctness).
void batch_schedule_new_threads(const std::set<long>& before);

}  // namespace ember::distributed
