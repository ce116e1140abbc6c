#include <ember/core/cpu/parallel.h>

#include <ember/core/cpu/blas.h>

namespace ember::cpu {

namespace {
int g_threads = 0;  // 0: not chosen yet, use OpenMP's default
// The BLAS runs single-threaded inside ember's own thread pool (blas::gemm).
const bool g_blas_single_threaded = (blas::set_num_threads(1), true);
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
