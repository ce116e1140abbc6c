// The few LAPACK routines behind ember.linalg on the CPU, under one set of
// names for each library cmake/blas.cmake may link. OpenBLAS carries LAPACK
// in all three of its flavours, with different symbol names (`nm -D`):
//   scipy-openblas32        scipy_dgetrf_      32-bit integers
//   numpy's OpenBLAS ILP64  scipy_dgetrf_64_   64-bit integers
//   the system's OpenBLAS   dgetrf_            32-bit integers
// No header ships the Fortran interface, so the routines are declared here.
// A BLAS without LAPACK (EMBER_HAS_LAPACK unset by cmake/blas.cmake) still
// builds: kHasLapack is false and the kernels in linalg.cpp say so.
// Include only from core/cpu/linalg.cpp.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(EMBER_HAS_LAPACK)

#if defined(EMBER_BLAS_NUMPY_OPENBLAS64)
#define EMBER_LAPACK(name) scipy_##name##_64_
#elif defined(EMBER_BLAS_SCIPY_OPENBLAS)
#define EMBER_LAPACK(name) scipy_##name##_
#else
#define EMBER_LAPACK(name) name##_
#endif

namespace ember::cpu::lapack {
#if defined(EMBER_BLAS_NUMPY_OPENBLAS64)
using Int = int64_t;
#else
using Int = int;
#endif
constexpr bool kHasLapack = true;
}  // namespace ember::cpu::lapack

// Fortran calling convention: everything by pointer, and one hidden length
// argument per character argument, after all the others (gfortran's ABI).
extern "C" {
using ember::cpu::lapack::Int;
void EMBER_LAPACK(sgetrf)(const Int* m, const Int* n, float* a, const Int* lda, Int* ipiv, Int* info);
void EMBER_LAPACK(dgetrf)(const Int* m, const Int* n, double* a, const Int* lda, Int* ipiv, Int* info);
void EMBER_LAPACK(sgetrs)(const char* trans, const Int* n, const Int* nrhs, const float* a, const Int* lda,
                          const Int* ipiv, float* b, const Int* ldb, Int* info, size_t trans_len);
void EMBER_LAPACK(dgetrs)(const char* trans, const Int* n, const Int* nrhs, const double* a, const Int* lda,
                          const Int* ipiv, double* b, const Int* ldb, Int* info, size_t trans_len);
void EMBER_LAPACK(spotrf)(const char* uplo, const Int* n, float* a, const Int* lda, Int* info, size_t uplo_len);
void EMBER_LAPACK(dpotrf)(const char* uplo, const Int* n, double* a, const Int* lda, Int* info, size_t uplo_len);
void EMBER_LAPACK(strtrs)(const char* uplo, const char* trans, const char* diag, const Int* n, const Int* nrhs,
                          const float* a, const Int* lda, float* b, const Int* ldb, Int* info, size_t uplo_len,
                          size_t trans_len, size_t diag_len);
void EMBER_LAPACK(dtrtrs)(const char* uplo, const char* trans, const char* diag, const Int* n, const Int* nrhs,
                          const double* a, const Int* lda, double* b, const Int* ldb, Int* info, size_t uplo_len,
                          size_t trans_len, size_t diag_len);
void EMBER_LAPACK(sgeqrf)(const Int* m, const Int* n, float* a, const Int* lda, float* tau, float* work,
                          const Int* lwork, Int* info);
void EMBER_LAPACK(dgeqrf)(const Int* m, const Int* n, double* a, const Int* lda, double* tau, double* work,
                          const Int* lwork, Int* info);
void EMBER_LAPACK(sorgqr)(const Int* m, const Int* n, const Int* k, float* a, const Int* lda, const float* tau,
                          float* work, const Int* lwork, Int* info);
void EMBER_LAPACK(dorgqr)(const Int* m, const Int* n, const Int* k, double* a, const Int* lda, const double* tau,
                          double* work, const Int* lwork, Int* info);
void EMBER_LAPACK(ssyevd)(const char* jobz, const char* uplo, const Int* n, float* a, const Int* lda, float* w,
                          float* work, const Int* lwork, Int* iwork, const Int* liwork, Int* info, size_t jobz_len,
                          size_t uplo_len);
void EMBER_LAPACK(dsyevd)(const char* jobz, const char* uplo, const Int* n, double* a, const Int* lda, double* w,
                          double* work, const Int* lwork, Int* iwork, const Int* liwork, Int* info, size_t jobz_len,
                          size_t uplo_len);
void EMBER_LAPACK(sgesdd)(const char* jobz, const Int* m, const Int* n, float* a, const Int* lda, float* s, float* u,
                          const Int* ldu, float* vt, const Int* ldvt, float* work, const Int* lwork, Int* iwork,
                          Int* info, size_t jobz_len);
void EMBER_LAPACK(dgesdd)(const char* jobz, const Int* m, const Int* n, double* a, const Int* lda, double* s,
                          double* u, const Int* ldu, double* vt, const Int* ldvt, double* work, const Int* lwork,
                          Int* iwork, Int* info, size_t jobz_len);
}

namespace ember::cpu::lapack {

// Overloads on the element type, so the kernels are written once.
inline void getrf(Int m, Int n, float* a, Int lda, Int* ipiv, Int* info) { EMBER_LAPACK(sgetrf)(&m, &n, a, &lda, ipiv, info); }
inline void getrf(Int m, Int n, double* a, Int lda, Int* ipiv, Int* info) { EMBER_LAPACK(dgetrf)(&m, &n, a, &lda, ipiv, info); }

inline void getrs(char trans, Int n, Int nrhs, const float* a, Int lda, const Int* ipiv, float* b, Int ldb, Int* info) {
  EMBER_LAPACK(sgetrs)(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}
inline void getrs(char trans, Int n, Int nrhs, const double* a, Int lda, const Int* ipiv, double* b, Int ldb,
                  Int* info) {
  EMBER_LAPACK(dgetrs)(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, info, 1);
}

inline void potrf(char uplo, Int n, float* a, Int lda, Int* info) { EMBER_LAPACK(spotrf)(&uplo, &n, a, &lda, info, 1); }
inline void potrf(char uplo, Int n, double* a, Int lda, Int* info) { EMBER_LAPACK(dpotrf)(&uplo, &n, a, &lda, info, 1); }

inline void trtrs(char uplo, char diag, Int n, Int nrhs, const float* a, Int lda, float* b, Int ldb, Int* info) {
  EMBER_LAPACK(strtrs)(&uplo, "N", &diag, &n, &nrhs, a, &lda, b, &ldb, info, 1, 1, 1);
}
inline void trtrs(char uplo, char diag, Int n, Int nrhs, const double* a, Int lda, double* b, Int ldb, Int* info) {
  EMBER_LAPACK(dtrtrs)(&uplo, "N", &diag, &n, &nrhs, a, &lda, b, &ldb, info, 1, 1, 1);
}

inline void geqrf(Int m, Int n, float* a, Int lda, float* tau, float* work, Int lwork, Int* info) {
  EMBER_LAPACK(sgeqrf)(&m, &n, a, &lda, tau, work, &lwork, info);
}
inline void geqrf(Int m, Int n, double* a, Int lda, double* tau, double* work, Int lwork, Int* info) {
  EMBER_LAPACK(dgeqrf)(&m, &n, a, &lda, tau, work, &lwork, info);
}

inline void orgqr(Int m, Int n, Int k, float* a, Int lda, const float* tau, float* work, Int lwork, Int* info) {
  EMBER_LAPACK(sorgqr)(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
inline void orgqr(Int m, Int n, Int k, double* a, Int lda, const double* tau, double* work, Int lwork, Int* info) {
  EMBER_LAPACK(dorgqr)(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}

inline void syevd(char jobz, char uplo, Int n, float* a, Int lda, float* w, float* work, Int lwork, Int* iwork,
                  Int liwork, Int* info) {
  EMBER_LAPACK(ssyevd)(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}
inline void syevd(char jobz, char uplo, Int n, double* a, Int lda, double* w, double* work, Int lwork, Int* iwork,
                  Int liwork, Int* info) {
  EMBER_LAPACK(dsyevd)(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);
}

inline void gesdd(char jobz, Int m, Int n, float* a, Int lda, float* s, float* u, Int ldu, float* vt, Int ldvt,
                  float* work, Int lwork, Int* iwork, Int* info) {
  EMBER_LAPACK(sgesdd)(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}
inline void gesdd(char jobz, Int m, Int n, double* a, Int lda, double* s, double* u, Int ldu, double* vt, Int ldvt,
                  double* work, Int lwork, Int* iwork, Int* info) {
  EMBER_LAPACK(dgesdd)(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);
}

}  // namespace ember::cpu::lapack

#else  // no LAPACK in the linked BLAS

namespace ember::cpu::lapack {
using Int = int;
constexpr bool kHasLapack = false;
}  // namespace ember::cpu::lapack

#endif
