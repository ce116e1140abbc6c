#include "loop_thread.h"

#include <cstdlib>
#include <cstring>

#ifdef __linux__
#include <dirent.h>
#include <sched.h>
#endif

namespace ember::distributed {

std::set<long> thread_ids() {
  std::set<long> ids;
#ifdef __linux__
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ids.insert(std::atol(entry->d_name));
    }
    closedir(dir);
  }
#endif
  return ids;
}

void batch_schedule_new_threads(const std::set<long>& before) {
#ifdef __linux__
  const char* setting = std::getenv("EMBER_GLOO_LOOP_BATCH");
  if (setting && std::strcmp(setting, "0") == 0) return;
  // A thread another part of the process started meanwhile is demoted too;
  // harmless, as SCHED_BATCH only changes wakeup preemption.
  for (long tid : thread_ids()) {
    if (before.count(tid)) continue;
    sched_param param{};
    sched_setscheduler(static_cast<pid_t>(tid), SCHED_BATCH, &param);
  }
#else
  (void)before;
#endif
}

}  // namespace ember::distributed
