#include <ember/core/cpu/parallel.h>

#include <ember/core/cpu/blas.h>

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

// One setting for both pools: ember's OpenMP loops and the BLAS's own threads.
void set_num_threads(int n) {
  g_threads = n > 0 ? n : 1;
  blas::set_num_threads(g_threads);
}

}  // namespace ember::cpu
