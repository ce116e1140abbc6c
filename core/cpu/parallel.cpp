#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

namespace {
int g_threads = 0;  // 0: not chosen yet, use OpenMP's default
}

int get_num_threads() {
#ifdef _OPENMP
  if (g_threads == 0) g_threads = omp_get_max_threads();
  return g_threads;
#else
  return 1;
#endif
}

void set_num_threads(int n) { g_threads = n > 0 ? n : 1; }

}  // namespace ember::cpu
