// The linalg family on the GPU: cuSOLVER's dense routines, one call per
// matrix of the batch, on the device's current stream, with the contract of
// core/cpu/linalg.h (batched column-major matrices worked on in place, int32
// pivots and info codes on the GPU, checked by the front-end).
//
// Triangular solves are cuBLAS's trsm (cuSOLVER has none for a general
// right-hand side), on ember's cuBLAS handle.
//
// The cuSOLVER handle is kept per device in ember's CUDA context (created at
// the first call, bound to the current stream at each). Workspaces are ember
// tensors, so they come from the caching allocator and are counted with the
// rest of ember's memory; freeing one while cuSOLVER still runs is safe, as
// the allocator reuses a block only for later work on the same stream.
//
// Status codes are checked at every call. Info codes that only an illegal
// argument can set (getrs, geqrf, orgqr) go to a scratch tensor that is read
// back once per op, so a wrong call is reported rather than ignored.
#include <ember/cuda/linalg.h>

#include <climits>
#include <mutex>
#include <type_traits>

#include <cusolverDn.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

const char* cusolver_status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "an unknown cuSOLVER status";
  }
}

[[noreturn]] void raise_cusolver_error(cusolverStatus_t s, const char* call, const char* file, int line) {
  throw Error(str("cuSOLVER call failed: ", call, " returned ", cusolver_status_name(s), " (", static_cast<int>(s),
                  ") at ", file, ":", line));
}

#define EMBER_CUSOLVER_CHECK(call)                                              \
  do {                                                                          \
    const cusolverStatus_t ember_status_ = (call);                              \
    if (ember_status_ != CUSOLVER_STATUS_SUCCESS)                               \
      raise_cusolver_error(ember_status_, #call, __FILE__, __LINE__);           \
  } while (0)

// The device's cuSOLVER handle, bound to its current stream.
cusolverDnHandle_t cusolver_handle(int index) {
  DeviceContext& ctx = Registry::get().device(index);
  std::lock_guard<std::mutex> lock(ctx.mutex);
  if (!ctx.cusolver) {
    DeviceGuard guard(ctx.index);
    cusolverDnHandle_t h = nullptr;
    EMBER_CUSOLVER_CHECK(cusolverDnCreate(&h));
    ctx.cusolver = h;
  }
  auto* h = static_cast<cusolverDnHandle_t>(ctx.cusolver);
  EMBER_CUSOLVER_CHECK(cusolverDnSetStream(h, ctx.current_stream.load()));
  return h;
}

// cuSOLVER's legacy API takes int sizes.
int as_int(int64_t v, const char* op) {
  EMBER_CHECK(v <= INT_MAX, Error, "linalg.", op, ": a matrix dimension of ", v, " exceeds cuSOLVER's 32-bit sizes");
  return static_cast<int>(v);
}

int64_t rows_of(const Tensor& t) { return t.size(t.dim() - 2); }
int64_t cols_of(const Tensor& t) { return t.size(t.dim() - 1); }
int64_t batch_of(const Tensor& t) {
  const int64_t per = rows_of(t) * cols_of(t);
  return per == 0 ? 0 : t.numel() / per;
}

template <class T>
T* matrix(const Tensor& t, int64_t i) {
  return t.data<T>() + i * rows_of(t) * cols_of(t);
}

// The single and double precision entry points under one name.
template <class T>
struct Solver;

template <>
struct Solver<float> {
  static constexpr auto getrf_bufferSize = cusolverDnSgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnSgetrf;
  static constexpr auto getrs = cusolverDnSgetrs;
  static constexpr auto potrf_bufferSize = cusolverDnSpotrf_bufferSize;
  static constexpr auto potrf = cusolverDnSpotrf;
  static constexpr auto geqrf_bufferSize = cusolverDnSgeqrf_bufferSize;
  static constexpr auto geqrf = cusolverDnSgeqrf;
  static constexpr auto orgqr_bufferSize = cusolverDnSorgqr_bufferSize;
  static constexpr auto orgqr = cusolverDnSorgqr;
  static constexpr auto syevd_bufferSize = cusolverDnSsyevd_bufferSize;
  static constexpr auto syevd = cusolverDnSsyevd;
  static constexpr auto gesvd_bufferSize = cusolverDnSgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnSgesvd;
};

template <>
struct Solver<double> {
  static constexpr auto getrf_bufferSize = cusolverDnDgetrf_bufferSize;
  static constexpr auto getrf = cusolverDnDgetrf;
  static constexpr auto getrs = cusolverDnDgetrs;
  static constexpr auto potrf_bufferSize = cusolverDnDpotrf_bufferSize;
  static constexpr auto potrf = cusolverDnDpotrf;
  static constexpr auto geqrf_bufferSize = cusolverDnDgeqrf_bufferSize;
  static constexpr auto geqrf = cusolverDnDgeqrf;
  static constexpr auto orgqr_bufferSize = cusolverDnDorgqr_bufferSize;
  static constexpr auto orgqr = cusolverDnDorgqr;
  static constexpr auto syevd_bufferSize = cusolverDnDsyevd_bufferSize;
  static constexpr auto syevd = cusolverDnDsyevd;
  static constexpr auto gesvd_bufferSize = cusolverDnDgesvd_bufferSize;
  static constexpr auto gesvd = cusolverDnDgesvd;
};

template <class F>
void dispatch(const Tensor& t, const char* op, const F& f) {
  switch (t.dtype()) {
    case DType::Float32: f(float{}); break;
    case DType::Float64: f(double{}); break;
    default: throw Error(str("linalg.", op, ": cuSOLVER kernels take float32 or float64, got ", dtype_name(t.dtype())));
  }
}

// A workspace of `count` elements of t's dtype on t's device (at least one).
Tensor workspace(const Tensor& t, int count) { return empty({std::max(count, 1)}, t.dtype(), t.device()); }

// One int per matrix for info codes nobody but this file reads.
Tensor scratch_info(const Tensor& t, int64_t batch) { return empty({std::max<int64_t>(batch, 1)}, DType::Int32, t.device()); }

// Raises when a call that only an illegal argument can fail reported one.
void check_scratch_info(const Tensor& info, const char* op) {
  const Tensor host = info.cpu();
  const int32_t* codes = host.data<int32_t>();
  for (int64_t i = 0; i < host.numel(); ++i) {
    EMBER_CHECK(codes[i] == 0, Error, "linalg.", op, ": cuSOLVER reported info ", codes[i], " for matrix ", i,
                " (an illegal argument: a bug in ember)");
  }
}

}  // namespace

void lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info) {
  const int device = a.device().index;
  DeviceGuard guard(device);
  const int m = as_int(rows_of(a), "lu_factor"), n = as_int(cols_of(a), "lu_factor"), lda = std::max(m, 1);
  const int64_t k = std::min(m, n), batch = batch_of(a);
  dispatch(a, "lu_factor", [&](auto tag) {
    using T = decltype(tag);
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    EMBER_CUSOLVER_CHECK(Solver<T>::getrf_bufferSize(h, m, n, a.data<T>(), lda, &lwork));
    const Tensor work = workspace(a, lwork);
    for (int64_t i = 0; i < batch; ++i) {
      EMBER_CUSOLVER_CHECK(Solver<T>::getrf(h, m, n, matrix<T>(a, i), lda, work.data<T>(),
                                            pivots.data<int32_t>() + i * k, info.data<int32_t>() + i));
    }
  });
}

void lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool transpose) {
  const int device = lu.device().index;
  DeviceGuard guard(device);
  const int n = as_int(cols_of(lu), "lu_solve"), k = as_int(cols_of(b), "lu_solve"), ld = std::max(n, 1);
  const int64_t batch = batch_of(lu);
  const Tensor info = scratch_info(lu, batch);
  dispatch(lu, "lu_solve", [&](auto tag) {
    using T = decltype(tag);
    cusolverDnHandle_t h = cusolver_handle(device);
    for (int64_t i = 0; i < batch; ++i) {
      EMBER_CUSOLVER_CHECK(Solver<T>::getrs(h, transpose ? CUBLAS_OP_T : CUBLAS_OP_N, n, k, matrix<T>(lu, i), ld,
                                            pivots.data<int32_t>() + i * n, matrix<T>(b, i), ld,
                                            info.data<int32_t>() + i));
    }
  });
  check_scratch_info(info, "lu_solve");
}

void cholesky(const Tensor& a, bool upper, const Tensor& info) {
  const int device = a.device().index;
  DeviceGuard guard(device);
  const int n = as_int(cols_of(a), "cholesky"), lda = std::max(n, 1);
  const int64_t batch = batch_of(a);
  const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  dispatch(a, "cholesky", [&](auto tag) {
    using T = decltype(tag);
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    EMBER_CUSOLVER_CHECK(Solver<T>::potrf_bufferSize(h, uplo, n, a.data<T>(), lda, &lwork));
    const Tensor work = workspace(a, lwork);
    for (int64_t i = 0; i < batch; ++i) {
      EMBER_CUSOLVER_CHECK(Solver<T>::potrf(h, uplo, n, matrix<T>(a, i), lda, work.data<T>(), lwork,
                                            info.data<int32_t>() + i));
    }
  });
}

void triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool unitriangular) {
  const int device = a.device().index;
  DeviceGuard guard(device);
  const int n = as_int(cols_of(a), "solve_triangular"), k = as_int(cols_of(b), "solve_triangular");
  const int ld = std::max(n, 1);
  const int64_t batch = batch_of(a);
  const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  const cublasDiagType_t diag = unitriangular ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  dispatch(a, "solve_triangular", [&](auto tag) {
    using T = decltype(tag);
    cublasHandle_t h = cublas_handle(device);
    const T one = 1;
    for (int64_t i = 0; i < batch; ++i) {
      if constexpr (std::is_same_v<T, float>) {
        EMBER_CUBLAS_CHECK(cublasStrsm(h, CUBLAS_SIDE_LEFT, uplo, CUBLAS_OP_N, diag, n, k, &one, matrix<T>(a, i), ld,
                                       matrix<T>(b, i), ld));
      } else {
        EMBER_CUBLAS_CHECK(cublasDtrsm(h, CUBLAS_SIDE_LEFT, uplo, CUBLAS_OP_N, diag, n, k, &one, matrix<T>(a, i), ld,
                                       matrix<T>(b, i), ld));
      }
    }
  });
}

void geqrf(const Tensor& a, const Tensor& tau) {
  const int device = a.device().index;
  DeviceGuard guard(device);
  const int m = as_int(rows_of(a), "qr"), n = as_int(cols_of(a), "qr"), lda = std::max(m, 1);
  const int64_t k = std::min(m, n), batch = batch_of(a);
  const Tensor info = scratch_info(a, batch);
  dispatch(a, "qr", [&](auto tag) {
    using T = decltype(tag);
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    EMBER_CUSOLVER_CHECK(Solver<T>::geqrf_bufferSize(h, m, n, a.data<T>(), lda, &lwork));
    const Tensor work = workspace(a, lwork);
    for (int64_t i = 0; i < batch; ++i) {
      EMBER_CUSOLVER_CHECK(Solver<T>::geqrf(h, m, n, matrix<T>(a, i), lda, tau.data<T>() + i * k, work.data<T>(),
                                            lwork, info.data<int32_t>() + i));
    }
  });
  check_scratch_info(info, "qr");
}

void orgqr(const Tensor& q, const Tensor& tau) {
  const int device = q.device().index;
  DeviceGuard guard(device);
  const int m = as_int(rows_of(q), "qr"), c = as_int(cols_of(q), "qr"), lda = std::max(m, 1);
  const int k = as_int(tau.size(tau.dim() - 1), "qr");
  const int64_t batch = batch_of(q);
  const Tensor info = scratch_info(q, batch);
  dispatch(q, "qr", [&](auto tag) {
    using T = decltype(tag);
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    EMBER_CUSOLVER_CHECK(Solver<T>::orgqr_bufferSize(h, m, c, k, q.data<T>(), lda, tau.data<T>(), &lwork));
    const Tensor work = workspace(q, lwork);
    for (int64_t i = 0; i < batch; ++i) {
      EMBER_CUSOLVER_CHECK(Solver<T>::orgqr(h, m, c, k, matrix<T>(q, i), lda, tau.data<T>() + i * k, work.data<T>(),
                                            lwork, info.data<int32_t>() + i));
    }
  });
  check_scratch_info(info, "qr");
}

void eigh(const Tensor& a, const Tensor& w, bool upper, bool vectors, const Tensor& info) {
  const int device = a.device().index;
  DeviceGuard guard(device);
  const int n = as_int(cols_of(a), "eigh"), lda = std::max(n, 1);
  const int64_t batch = batch_of(a);
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const cublasFillMode_t uplo = upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  dispatch(a, "eigh", [&](auto tag) {
    using T = decltype(tag);
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    EMBER_CUSOLVER_CHECK(Solver<T>::syevd_bufferSize(h, jobz, uplo, n, a.data<T>(), lda, w.data<T>(), &lwork));
    const Tensor work = workspace(a, lwork);
    for (int64_t i = 0; i < batch; ++i) {
      EMBER_CUSOLVER_CHECK(Solver<T>::syevd(h, jobz, uplo, n, matrix<T>(a, i), lda, w.data<T>() + i * n,
                                            work.data<T>(), lwork, info.data<int32_t>() + i));
    }
  });
}

void svd(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vh, bool full, bool vectors,
         const Tensor& info) {
  const int device = a.device().index;
  DeviceGuard guard(device);
  const int m = as_int(rows_of(a), "svd"), n = as_int(cols_of(a), "svd");
  EMBER_CHECK(m >= n, Error, "linalg.svd: the cuSOLVER kernel expects rows >= columns, got ", m, " x ", n);
  const int lda = std::max(m, 1), ldu = std::max(m, 1), ldvt = std::max(n, 1);
  const int64_t batch = batch_of(a), u_cols = full ? m : n;
  // jobu 'A': all m columns of U, 'S': the first n; jobvt 'A': all of Vt (n x n, as m >= n).
  const signed char jobu = !vectors ? 'N' : full ? 'A' : 'S';
  const signed char jobvt = vectors ? 'A' : 'N';
  dispatch(a, "svd", [&](auto tag) {
    using T = decltype(tag);
    cusolverDnHandle_t h = cusolver_handle(device);
    int lwork = 0;
    EMBER_CUSOLVER_CHECK(Solver<T>::gesvd_bufferSize(h, m, n, &lwork));
    const Tensor work = workspace(a, lwork);
    const Tensor rwork = workspace(a, n);  // the unconverged superdiagonal, when info > 0
    for (int64_t i = 0; i < batch; ++i) {
      T* up = vectors ? u.data<T>() + i * m * u_cols : nullptr;
      T* vp = vectors ? vh.data<T>() + i * n * n : nullptr;
      EMBER_CUSOLVER_CHECK(Solver<T>::gesvd(h, jobu, jobvt, m, n, matrix<T>(a, i), lda, s.data<T>() + i * n, up, ldu,
                                            vp, ldvt, work.data<T>(), lwork, rwork.data<T>(),
                                            info.data<int32_t>() + i));
    }
  });
}

}  // namespace ember::cuda
