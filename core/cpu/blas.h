// One set of names for the CBLAS that cmake/blas.cmake linked: PyPI's
// scipy-openblas32 (symbols prefixed scipy_) or the system's OpenBLAS/CBLAS.
// Include only from .cpp files of libember: the BLAS headers are private.
#pragma once
#include <algorithm>
#include <cstdint>

#include <cblas.h>

#include <ember/core/cpu/parallel.h>

#if defined(EMBER_BLAS_SCIPY_OPENBLAS)
#define EMBER_CBLAS(name) scipy_cblas_##name
#define EMBER_OPENBLAS(name) scipy_openblas_##name
#elif defined(EMBER_BLAS_OPENBLAS)
#define EMBER_CBLAS(name) cblas_##name
#define EMBER_OPENBLAS(name) openblas_##name
// Debian's cblas.h alternative may be netlib's, which lacks these.
extern "C" {
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char* openblas_get_corename(void);
char* openblas_get_config(void);
}
#else
#define EMBER_CBLAS(name) cblas_##name
#endif

namespace ember::cpu::blas {

// BLAS takes 32-bit sizes here (both libraries use 32-bit blasint).
using Int = int;

inline void gemm_serial(bool trans_a, bool trans_b, Int m, Int n, Int k, float alpha, const float* a, Int lda,
                        const float* b, Int ldb, float beta, float* c, Int ldc) {
  EMBER_CBLAS(sgemm)(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                     alpha, a, lda, b, ldb, beta, c, ldc);
}

inline void gemm_serial(bool trans_a, bool trans_b, Int m, Int n, Int k, double alpha, const double* a, Int lda,
                        const double* b, Int ldb, double beta, double* c, Int ldc) {
  EMBER_CBLAS(dgemm)(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                     alpha, a, lda, b, ldb, beta, c, ldc);
}

// C = alpha op(A) op(B) + beta C, row-major. The BLAS runs single-threaded
// (see parallel.cpp): a large product is split into blocks of C's rows (or
// columns) across ember's own threads, so one thread pool serves both the
// BLAS and the elementwise loops. Two pools on the same cores, each spinning
// while the other works, made training steps up to ten times slower.
template <class T>
void gemm(bool trans_a, bool trans_b, Int m, Int n, Int k, T alpha, const T* a, Int lda, const T* b, Int ldb,
          T beta, T* c, Int ldc) {
  constexpr int64_t kMinBlock = 32;  // rows or columns per block, for the BLAS kernels' efficiency
  const int64_t work = static_cast<int64_t>(m) * n * k;
  const bool by_rows = m >= n;
  const int64_t extent = by_rows ? m : n;
  const int64_t blocks = std::min<int64_t>(get_num_threads(), extent / kMinBlock);
  if (work < (int64_t{1} << 18) || blocks < 2) {
    gemm_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t blk = begin; blk < end; ++blk) {
      const Int lo = static_cast<Int>(extent * blk / blocks), hi = static_cast<Int>(extent * (blk + 1) / blocks);
      if (by_rows) {  // rows lo..hi of C come from rows lo..hi of op(A)
        const T* a_blk = trans_a ? a + lo : a + static_cast<int64_t>(lo) * lda;
        gemm_serial(trans_a, trans_b, hi - lo, n, k, alpha, a_blk, lda, b, ldb, beta, c + static_cast<int64_t>(lo) * ldc,
                    ldc);
      } else {  // columns lo..hi of C come from columns lo..hi of op(B)
        const T* b_blk = trans_b ? b + static_cast<int64_t>(lo) * ldb : b + lo;
        gemm_serial(trans_a, trans_b, m, hi - lo, k, alpha, a, lda, b_blk, ldb, beta, c + lo, ldc);
      }
    }
  });
}

// Threads the BLAS itself starts for one call (OpenBLAS only; other BLAS
// libraries keep their own setting). ember keeps it at 1: see gemm above.
inline void set_num_threads(int n) {
#ifdef EMBER_OPENBLAS
  EMBER_OPENBLAS(set_num_threads)(n);
#else
  (void)n;
#endif
}

inline int get_num_threads() {
#ifdef EMBER_OPENBLAS
  return EMBER_OPENBLAS(get_num_threads)();
#else
  return 1;
#endif
}

// "SkylakeX", "Cooperlake", ... : the kernel set OpenBLAS picked for this CPU.
inline const char* corename() {
#ifdef EMBER_OPENBLAS
  return EMBER_OPENBLAS(get_corename)();
#else
  return "unknown";
#endif
}

// The library's build description, e.g. "OpenBLAS 0.3.31 DYNAMIC_ARCH ... SkylakeX".
inline const char* config() {
#ifdef EMBER_OPENBLAS
  return EMBER_OPENBLAS(get_config)();
#else
  return "CBLAS";
#endif
}

}  // namespace ember::cpu::blas
