// One set of names for the CBLAS that cmake/blas.cmake linked: PyPI's
// scipy-openblas32 (symbols prefixed scipy_), the system's OpenBLAS/CBLAS, or
// the ILP64 OpenBLAS inside numpy's wheel (prefixed scipy_, suffixed 64_).
// Include only from .cpp files of libember: the BLAS headers are private.
#pragma once
#include <algorithm>
#include <cstdint>

#include <ember/core/cpu/parallel.h>

#if defined(EMBER_BLAS_NUMPY_OPENBLAS64)
// numpy ships the library without a header: the few functions ember calls,
// with 64-bit sizes, and CBLAS's enum values.
extern "C" {
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
void scipy_cblas_sgemm64_(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
                          float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                          int64_t ldc);
void scipy_cblas_dgemm64_(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
                          double alpha, const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                          double* c, int64_t ldc);
void scipy_openblas_set_num_threads64_(int num_threads);
int scipy_openblas_get_num_threads64_(void);
char* scipy_openblas_get_corename64_(void);
char* scipy_openblas_get_config64_(void);
}
#define EMBER_CBLAS(name) scipy_cblas_##name##64_
#define EMBER_OPENBLAS(name) scipy_openblas_##name##64_
#else
#include <cblas.h>
#endif

#if defined(EMBER_BLAS_NUMPY_OPENBLAS64)
// defined above
#elif defined(EMBER_BLAS_SCIPY_OPENBLAS)
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

// ember passes 32-bit sizes (numpy's ILP64 library widens them at the call).
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
