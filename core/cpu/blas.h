// One set of names for the CBLAS that cmake/blas.cmake linked: PyPI's
// scipy-openblas32 (symbols prefixed scipy_) or the system's OpenBLAS/CBLAS.
// Include only from .cpp files of libember: the BLAS headers are private.
#pragma once
#include <cstdint>

#include <cblas.h>

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

inline void gemm(bool trans_a, bool trans_b, Int m, Int n, Int k, float alpha, const float* a, Int lda,
                 const float* b, Int ldb, float beta, float* c, Int ldc) {
  EMBER_CBLAS(sgemm)(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                     alpha, a, lda, b, ldb, beta, c, ldc);
}

inline void gemm(bool trans_a, bool trans_b, Int m, Int n, Int k, double alpha, const double* a, Int lda,
                 const double* b, Int ldb, double beta, double* c, Int ldc) {
  EMBER_CBLAS(dgemm)(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                     alpha, a, lda, b, ldb, beta, c, ldc);
}

// Threads the BLAS itself starts for one large call (OpenBLAS only; other
// BLAS libraries keep their own setting).
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
