// Batched matrix products on the CPU. Float types go to BLAS gemm, reading
// transposed views through the transpose flags instead of copying them;
// integer types use a straightforward loop (PyTorch supports them, BLAS does not).
#include <ember/core/cpu/matmul.h>

#include <algorithm>
#include <climits>
#include <vector>

#include <ember/core/cpu/blas.h>
#include <ember/core/cpu/copy.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {

namespace {

// OpenBLAS runs a gemm with M*N*K at most this on one thread; batches of
// matrices this small are spread over threads by batch instead.
constexpr int64_t kSmallGemm = 65536 * 4;

// How BLAS reads one rows x cols matrix with element strides (rs, cs):
// row-major as is (trans = false) or as the transpose of a row-major matrix.
struct BlasLayout {
  bool ok = false;
  bool trans = false;
  int64_t ld = 0;
};

BlasLayout blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  // The stride of a dim of size 1 never matters, so such dims fit either way.
  if (cs == 1 || cols <= 1) {
    const int64_t ld = rows <= 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1)) return {true, false, ld};
  }
  if (rs == 1 || rows <= 1) {
    const int64_t ld = cols <= 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1)) return {true, true, ld};
  }
  return {};
}

// A copy of t with contiguous memory (no autograd: this is kernel-internal).
Tensor dense(const Tensor& t) {
  Tensor c = empty(t.shape(), t.dtype(), t.device());
  copy(c, t);
  return c;
}

// One operand after layout checks: its data, the per-matrix strides and
// the element offset of each batch matrix.
struct Operand {
  Tensor t;
  int64_t rs = 0, cs = 0;
  std::vector<int64_t> batch_offsets;
};

Operand prepare(const Tensor& t, int64_t batch_numel, bool need_blas_layout) {
  Operand op;
  op.t = t;
  const int64_t nd = t.dim();
  if (need_blas_layout && !blas_layout(t.size(nd - 2), t.size(nd - 1), t.stride(nd - 2), t.stride(nd - 1)).ok) {
    op.t = dense(t);
  }
  op.rs = op.t.stride(nd - 2);
  op.cs = op.t.stride(nd - 1);
  // Offsets of each batch matrix, walking the batch dims like an odometer.
  op.batch_offsets.resize(batch_numel);
  std::vector<int64_t> index(nd - 2, 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < batch_numel; ++i) {
    op.batch_offsets[i] = offset;
    for (int64_t d = nd - 3; d >= 0; --d) {
      offset += op.t.stride(d);
      if (++index[d] < op.t.size(d)) break;
      offset -= op.t.stride(d) * op.t.size(d);
      index[d] = 0;
    }
  }
  return op;
}

void check_blas_size(int64_t v) {
  EMBER_CHECK(v <= INT_MAX, Error, "matmul: a matrix dimension or stride of ", v,
              " exceeds what the BLAS accepts (32-bit sizes)");
}

template <class T>
void gemm_blas(const Operand& a, const Operand& b, T* out, int64_t M, int64_t N, int64_t K, T alpha, T beta,
               int64_t batch) {
  const BlasLayout la = blas_layout(M, K, a.rs, a.cs);
  const BlasLayout lb = blas_layout(K, N, b.rs, b.cs);
  for (int64_t v : {M, N, K, la.ld, lb.ld}) check_blas_size(v);
  const T* pa = a.t.template data<T>();
  const T* pb = b.t.template data<T>();
  // serial: one BLAS call on this thread; otherwise blas::gemm may split the
  // matrix over ember's threads.
  auto one = [&](int64_t i, bool serial) {
    const auto m = static_cast<blas::Int>(M), n = static_cast<blas::Int>(N), k = static_cast<blas::Int>(K);
    const auto lda = static_cast<blas::Int>(la.ld), ldb = static_cast<blas::Int>(lb.ld);
    const T* ai = pa + a.batch_offsets[i];
    const T* bi = pb + b.batch_offsets[i];
    T* ci = out + i * M * N;
    if (serial) blas::gemm_serial(la.trans, lb.trans, m, n, k, alpha, ai, lda, bi, ldb, beta, ci, n);
    else blas::gemm(la.trans, lb.trans, m, n, k, alpha, ai, lda, bi, ldb, beta, ci, n);
  };
  const int64_t work = M * N * K;
  if (batch > 1 && (work <= kSmallGemm || batch >= get_num_threads())) {
    // Whole matrices per thread: small ones (one BLAS call is not worth
    // splitting), or a batch with at least a matrix per thread (attention's
    // [batch * heads] products): splitting each matrix instead paid a
    // parallel region per matrix, several times slower.
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(work, 1));
    parallel_for(0, batch, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) one(i, true);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i, false);
  }
}

// Integer product with wrap-around like PyTorch's (accumulated in unsigned
// 64-bit arithmetic, where overflow is defined).
template <class T>
void gemm_loop(const Operand& a, const Operand& b, T* out, int64_t M, int64_t N, int64_t K, double alpha,
               double beta, int64_t batch) {
  const uint64_t ua = static_cast<uint64_t>(static_cast<int64_t>(alpha));
  const uint64_t ub = static_cast<uint64_t>(static_cast<int64_t>(beta));
  const T* pa = a.t.template data<T>();
  const T* pb = b.t.template data<T>();
  parallel_for(0, batch * M, std::max<int64_t>(1, 32768 / std::max<int64_t>(N * K, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r / M, m = r % M;
      const T* arow = pa + a.batch_offsets[i] + m * a.rs;
      const T* bmat = pb + b.batch_offsets[i];
      T* orow = out + r * N;
      for (int64_t n = 0; n < N; ++n) {
        uint64_t acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          acc += static_cast<uint64_t>(static_cast<int64_t>(arow[k * a.cs])) *
                 static_cast<uint64_t>(static_cast<int64_t>(bmat[k * b.rs + n * b.cs]));
        }
        uint64_t v = ua * acc;
        if (beta != 0) v += ub * static_cast<uint64_t>(static_cast<int64_t>(orow[n]));
        orow[n] = static_cast<T>(static_cast<int64_t>(v));
      }
    }
  });
}

}  // namespace

void matmul(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  const int64_t nd = out.dim();
  const int64_t M = out.size(nd - 2), N = out.size(nd - 1), K = a.size(nd - 1);
  int64_t batch = 1;
  for (int64_t d = 0; d < nd - 2; ++d) batch *= out.size(d);
  if (batch == 0 || M == 0 || N == 0) return;
  const DType dt = out.dtype();
  const bool use_blas = dt == DType::Float32 || dt == DType::Float64;
  EMBER_CHECK(use_blas || is_integral(dt), TypeError, "matmul: no CPU kernel for dtype ", dtype_name(dt));

  if (K == 0) {  // empty sum: out = beta * out
    dispatch_math(dt, "matmul", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* p = out.data<T>();
      for (int64_t i = 0; i < out.numel(); ++i) p[i] = beta == 0 ? T(0) : static_cast<T>(beta * p[i]);
    });
    return;
  }

  const Operand oa = prepare(a, batch, use_blas);
  const Operand ob = prepare(b, batch, use_blas);
  if (dt == DType::Float32) {
    gemm_blas<float>(oa, ob, out.data<float>(), M, N, K, static_cast<float>(alpha), static_cast<float>(beta), batch);
  } else if (dt == DType::Float64) {
    gemm_blas<double>(oa, ob, out.data<double>(), M, N, K, alpha, beta, batch);
  } else {
    dispatch_math(dt, "matmul", [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        gemm_loop<T>(oa, ob, out.data<T>(), M, N, K, alpha, beta, batch);
      } else {
        throw TypeError(str("matmul: no CPU kernel for dtype ", dtype_name(dt)));
      }
    });
  }
}

std::string blas_info() {
  return str(blas::config(), " (core ", blas::corename(), "; single-threaded calls spread over ember's ",
             get_num_threads(), " threads)");
}

}  // namespace ember::cpu
