// CPU kernels of the linalg family: one LAPACK call per matrix of the batch
// (core/cpu/lapack.h), matrices spread over ember's threads. The BLAS runs
// single-threaded inside each call (see core/cpu/blas.h), so the batch is
// where the parallelism is. Workspace sizes are asked of LAPACK once per
// batch (every matrix has the same shape) and each thread holds its own.
#include <ember/core/cpu/linalg.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include <ember/core/cpu/lapack.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {

bool has_lapack() { return lapack::kHasLapack; }

#if defined(EMBER_HAS_LAPACK)

namespace {

using lapack::Int;

// Matrices of a batched column-major tensor (see linalg.h).
int64_t batch_of(const Tensor& t) {
  const int64_t per = t.size(-2 + t.dim()) * t.size(t.dim() - 1);
  return per == 0 ? 0 : t.numel() / per;
}

// Calls f(i) for each matrix i, in parallel across the batch.
template <class F>
void for_each_matrix(int64_t batch, const F& f) {
  parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) { f(begin, end); });
}

template <class T>
T* matrix(const Tensor& t, int64_t i) {
  return t.data<T>() + i * t.size(-2 + t.dim()) * t.size(t.dim() - 1);
}

// LAPACK's workspace query answers a size in a T.
template <class T>
Int work_size(T answer) {
  return std::max<Int>(1, static_cast<Int>(answer));
}

// x = A^-1 x by forward (lower) or back (upper) substitution, column-major
// n x n A and n x k x: the fallback of triangular_solve for singular A.
template <class T>
void substitute(const T* a, T* x, int64_t n, int64_t k, bool upper, bool unit) {
  for (int64_t c = 0; c < k; ++c) {
    T* col = x + c * n;
    for (int64_t step = 0; step < n; ++step) {
      const int64_t i = upper ? n - 1 - step : step;
      T s = col[i];
      const int64_t lo = upper ? i + 1 : 0, hi = upper ? n : i;
      for (int64_t j = lo; j < hi; ++j) s -= a[i + j * n] * col[j];
      col[i] = unit ? s : s / a[i + i * n];
    }
  }
}

template <class F>
void dispatch(const Tensor& t, const char* op, const F& f) {
  switch (t.dtype()) {
    case DType::Float32: f(float{}); break;
    case DType::Float64: f(double{}); break;
    default: throw Error(str(op, ": LAPACK kernels take float32 or float64, got ", dtype_name(t.dtype())));
  }
}

}  // namespace

void lu_factor(const Tensor& a, const Tensor& pivots, const Tensor& info) {
  const Int m = static_cast<Int>(a.size(-2 + a.dim())), n = static_cast<Int>(a.size(-1 + a.dim()));
  const Int k = std::min(m, n);
  int32_t* piv = pivots.data<int32_t>();
  int32_t* inf = info.data<int32_t>();
  dispatch(a, "lu_factor", [&](auto tag) {
    using T = decltype(tag);
    for_each_matrix(batch_of(a), [&](int64_t begin, int64_t end) {
      std::vector<Int> ipiv(std::max<Int>(k, 1));
      for (int64_t i = begin; i < end; ++i) {
        Int status = 0;
        lapack::getrf(m, n, matrix<T>(a, i), std::max<Int>(m, 1), ipiv.data(), &status);
        for (Int j = 0; j < k; ++j) piv[i * k + j] = static_cast<int32_t>(ipiv[j]);
        inf[i] = static_cast<int32_t>(status);
      }
    });
  });
}

void lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool transpose) {
  const Int n = static_cast<Int>(lu.size(-1 + lu.dim()));
  const Int k = static_cast<Int>(b.size(-1 + b.dim()));
  const int32_t* piv = pivots.data<int32_t>();
  dispatch(lu, "lu_solve", [&](auto tag) {
    using T = decltype(tag);
    for_each_matrix(batch_of(lu), [&](int64_t begin, int64_t end) {
      std::vector<Int> ipiv(std::max<Int>(n, 1));
      for (int64_t i = begin; i < end; ++i) {
        for (Int j = 0; j < n; ++j) ipiv[j] = piv[i * n + j];
        Int status = 0;  // nonzero only for an illegal argument, which the front-end rules out
        lapack::getrs(transpose ? 'T' : 'N', n, k, matrix<T>(lu, i), std::max<Int>(n, 1), ipiv.data(), matrix<T>(b, i),
                      std::max<Int>(n, 1), &status);
      }
    });
  });
}

void cholesky(const Tensor& a, bool upper, const Tensor& info) {
  const Int n = static_cast<Int>(a.size(-1 + a.dim()));
  int32_t* inf = info.data<int32_t>();
  dispatch(a, "cholesky", [&](auto tag) {
    using T = decltype(tag);
    for_each_matrix(batch_of(a), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        Int status = 0;
        T* m = matrix<T>(a, i);
        lapack::potrf(upper ? 'U' : 'L', n, m, std::max<Int>(n, 1), &status);
        inf[i] = static_cast<int32_t>(status);  // NaN pivots: kernel::cholesky (core/ops/linalg.cpp)
      }
    });
  });
}

void triangular_solve(const Tensor& a, const Tensor& b, bool upper, bool unitriangular) {
  const Int n = static_cast<Int>(a.size(-1 + a.dim()));
  const Int k = static_cast<Int>(b.size(-1 + b.dim()));
  dispatch(a, "triangular_solve", [&](auto tag) {
    using T = decltype(tag);
    for_each_matrix(batch_of(a), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        Int status = 0;
        lapack::trtrs(upper ? 'U' : 'L', unitriangular ? 'U' : 'N', n, k, matrix<T>(a, i), std::max<Int>(n, 1),
                      matrix<T>(b, i), std::max<Int>(n, 1), &status);
        // trtrs refuses a zero on the diagonal (info > 0, b untouched);
        // PyTorch's trsm divides by it: substitute by hand then.
        if (status > 0) substitute(matrix<T>(a, i), matrix<T>(b, i), n, k, upper, unitriangular);
      }
    });
  });
}

void geqrf(const Tensor& a, const Tensor& tau) {
  const Int m = static_cast<Int>(a.size(-2 + a.dim())), n = static_cast<Int>(a.size(-1 + a.dim()));
  const Int k = std::min(m, n);
  dispatch(a, "geqrf", [&](auto tag) {
    using T = decltype(tag);
    T query{};
    Int status = 0;
    lapack::geqrf(m, n, static_cast<T*>(nullptr), std::max<Int>(m, 1), static_cast<T*>(nullptr), &query, -1, &status);
    const Int lwork = work_size(query);
    for_each_matrix(batch_of(a), [&](int64_t begin, int64_t end) {
      std::vector<T> work(lwork);
      for (int64_t i = begin; i < end; ++i) {
        Int st = 0;
        lapack::geqrf(m, n, matrix<T>(a, i), std::max<Int>(m, 1), tau.data<T>() + i * k, work.data(), lwork, &st);
      }
    });
  });
}

void orgqr(const Tensor& q, const Tensor& tau) {
  const Int m = static_cast<Int>(q.size(-2 + q.dim())), c = static_cast<Int>(q.size(-1 + q.dim()));
  const Int k = static_cast<Int>(tau.size(-1 + tau.dim()));
  dispatch(q, "orgqr", [&](auto tag) {
    using T = decltype(tag);
    T query{};
    Int status = 0;
    lapack::orgqr(m, c, k, static_cast<T*>(nullptr), std::max<Int>(m, 1), static_cast<const T*>(nullptr), &query, -1,
                  &status);
    const Int lwork = work_size(query);
    for_each_matrix(batch_of(q), [&](int64_t begin, int64_t end) {
      std::vector<T> work(lwork);
      for (int64_t i = begin; i < end; ++i) {
        Int st = 0;
        lapack::orgqr(m, c, k, matrix<T>(q, i), std::max<Int>(m, 1), tau.data<T>() + i * k, work.data(), lwork, &st);
      }
    });
  });
}

void eigh(const Tensor& a, const Tensor& w, bool upper, bool vectors, const Tensor& info) {
  const Int n = static_cast<Int>(a.size(-1 + a.dim()));
  const char jobz = vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
  int32_t* inf = info.data<int32_t>();
  dispatch(a, "eigh", [&](auto tag) {
    using T = decltype(tag);
    T query{};
    Int iquery = 0, status = 0;
    lapack::syevd(jobz, uplo, n, static_cast<T*>(nullptr), std::max<Int>(n, 1), static_cast<T*>(nullptr), &query, -1,
                  &iquery, -1, &status);
    const Int lwork = work_size(query), liwork = std::max<Int>(1, iquery);
    for_each_matrix(batch_of(a), [&](int64_t begin, int64_t end) {
      std::vector<T> work(lwork);
      std::vector<Int> iwork(liwork);
      for (int64_t i = begin; i < end; ++i) {
        Int st = 0;
        lapack::syevd(jobz, uplo, n, matrix<T>(a, i), std::max<Int>(n, 1), w.data<T>() + i * n, work.data(), lwork,
                      iwork.data(), liwork, &st);
        inf[i] = static_cast<int32_t>(st);
      }
    });
  });
}

void svd(const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vh, bool full, bool vectors,
         const Tensor& info) {
  const Int m = static_cast<Int>(a.size(-2 + a.dim())), n = static_cast<Int>(a.size(-1 + a.dim()));
  EMBER_CHECK(m >= n, Error, "svd: the kernel expects rows >= columns, got ", m, " x ", n);
  const char jobz = !vectors ? 'N' : full ? 'A' : 'S';
  const Int ldu = std::max<Int>(m, 1), ldvt = std::max<Int>(n, 1);
  int32_t* inf = info.data<int32_t>();
  dispatch(a, "svd", [&](auto tag) {
    using T = decltype(tag);
    T query{};
    Int status = 0;
    std::vector<Int> qiwork(8 * static_cast<size_t>(std::max<Int>(n, 1)));
    lapack::gesdd(jobz, m, n, static_cast<T*>(nullptr), std::max<Int>(m, 1), static_cast<T*>(nullptr),
                  static_cast<T*>(nullptr), ldu, static_cast<T*>(nullptr), ldvt, &query, -1, qiwork.data(), &status);
    const Int lwork = work_size(query);
    const int64_t u_cols = full ? m : n;
    for_each_matrix(batch_of(a), [&](int64_t begin, int64_t end) {
      std::vector<T> work(lwork);
      std::vector<Int> iwork(8 * static_cast<size_t>(std::max<Int>(n, 1)));
      T dummy[1] = {};
      for (int64_t i = begin; i < end; ++i) {
        T* up = vectors ? u.data<T>() + i * m * u_cols : dummy;
        T* vp = vectors ? vh.data<T>() + i * n * n : dummy;
        Int st = 0;
        lapack::gesdd(jobz, m, n, matrix<T>(a, i), std::max<Int>(m, 1), s.data<T>() + i * n, up, ldu, vp, ldvt,
                      work.data(), lwork, iwork.data(), &st);
        inf[i] = static_cast<int32_t>(st);
      }
    });
  });
}

#else  // built without LAPACK: the front-ends check has_lapack() first; this is a safety net

namespace {
[[noreturn]] void no_lapack(const char* op) {
  throw Error(str("linalg.", op, ": ember was built without LAPACK (the linked BLAS has none); rebuild it with "
                  "OpenBLAS (pip install scipy-openblas32, or the system's libopenblas-dev)"));
}
}  // namespace

void lu_factor(const Tensor&, const Tensor&, const Tensor&) { no_lapack("lu_factor"); }
void lu_solve(const Tensor&, const Tensor&, const Tensor&, bool) { no_lapack("lu_solve"); }
void cholesky(const Tensor&, bool, const Tensor&) { no_lapack("cholesky"); }
void triangular_solve(const Tensor&, const Tensor&, bool, bool) { no_lapack("solve_triangular"); }
void geqrf(const Tensor&, const Tensor&) { no_lapack("qr"); }
void orgqr(const Tensor&, const Tensor&) { no_lapack("qr"); }
void eigh(const Tensor&, const Tensor&, bool, bool, const Tensor&) { no_lapack("eigh"); }
void svd(const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool, bool, const Tensor&) { no_lapack("svd"); }

#endif

}  // namespace ember::cpu
