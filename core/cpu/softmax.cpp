// softmax / log_softmax kernels. Numerically stable: the maximum along the
// softmax dim is subtracted before exp, and log_softmax is formed as
// (x - max) - log(sum) so large inputs keep their digits.
//
// The last dim (inner == 1) is the hot path: per row one pass for the max,
// one fused pass writing exp(x - max) and summing it, one pass scaling (or
// shifting), rows in parallel. Other dims work on chunks of `inner` columns so
// every loop runs along contiguous memory. float32 exp is fast::exp, which
// vectorizes (std::exp does not); float64 uses std::exp.
#include <ember/core/cpu/softmax.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <ember/core/cpu/fast_math.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/cpu/vec_lanes.h>

namespace ember::cpu {

namespace {

inline float exp_of(float x) { return fast::exp(x); }  // vectorizes, < 1 ulp
inline double exp_of(double x) { return std::exp(x); }

// q[i] = exp(p[i] - m); returns the sum of q.
template <class T>
T exp_shifted_row(T* q, const T* p, T m, int64_t n) {
  for (int64_t i = 0; i < n; ++i) q[i] = exp_of(p[i] - m);
  return lanes::sum(q, n);
}

// q[i] = exp(p[i] - m[i]); sum[i] += q[i] over w columns.
template <class T>
void exp_shifted_cols(T* q, const T* p, const T* m, T* sum, int64_t w) {
  for (int64_t i = 0; i < w; ++i) {
    q[i] = exp_of(p[i] - m[i]);
    sum[i] += q[i];
  }
}

template <class T>
void last_dim(T* out, const T* x, int64_t outer, int64_t n, bool log) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1) / 4);
  parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T* p = x + o * n;
      T* q = out + o * n;
      bool nan = false;
      T m = lanes::max(p, n, nan);
      if (nan || m == kInf) {
        // A NaN, or +inf (inf - inf): the whole row is NaN, as in PyTorch.
        std::fill(q, q + n, std::numeric_limits<T>::quiet_NaN());
        continue;
      }
      if (m == -kInf) m = 0;  // all -inf: exp gives 0 everywhere and the row comes out NaN
      const T sum = exp_shifted_row(q, p, m, n);
      if (log) {
        const T log_sum = std::log(sum);
        for (int64_t i = 0; i < n; ++i) q[i] = (p[i] - m) - log_sum;
      } else {
        const T inv = T(1) / sum;
        for (int64_t i = 0; i < n; ++i) q[i] *= inv;
      }
    }
  });
}

template <class T>
void middle_dim(T* out, const T* x, int64_t outer, int64_t n, int64_t inner, bool log) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  // Each outer block's columns in chunks, so a small `outer` still uses every thread.
  constexpr int64_t kChunk = 256;
  const int64_t chunks = (inner + kChunk - 1) / kChunk;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n * kChunk, 1));
  parallel_for(0, outer * chunks, grain, [&](int64_t b, int64_t e) {
    T m[kChunk], sum[kChunk];
    bool bad[kChunk];
    for (int64_t job = b; job < e; ++job) {
      const int64_t o = job / chunks;
      const int64_t i0 = (job % chunks) * kChunk, w = std::min(kChunk, inner - i0);
      const T* p = x + o * n * inner + i0;
      T* q = out + o * n * inner + i0;
      for (int64_t i = 0; i < w; ++i) {
        m[i] = -kInf;
        sum[i] = 0;
        bad[i] = false;
      }
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t i = 0; i < w; ++i) {
          const T v = p[r * inner + i];
          m[i] = v > m[i] ? v : m[i];
          bad[i] = bad[i] || v != v;
        }
      }
      // Columns with a NaN or +inf come out NaN; all -inf gives 0/0 (NaN).
      // Shift those by 0 so the exp pass stays finite.
      for (int64_t i = 0; i < w; ++i) {
        bad[i] = bad[i] || m[i] == kInf;
        if (bad[i] || m[i] == -kInf) m[i] = 0;
      }
      for (int64_t r = 0; r < n; ++r) exp_shifted_cols(q + r * inner, p + r * inner, m, sum, w);
      for (int64_t i = 0; i < w; ++i) {
        sum[i] = bad[i] ? std::numeric_limits<T>::quiet_NaN() : log ? std::log(sum[i]) : T(1) / sum[i];
      }
      for (int64_t r = 0; r < n; ++r) {
        T* qr = q + r * inner;
        const T* pr = p + r * inner;
        if (log) {
          for (int64_t i = 0; i < w; ++i) qr[i] = (pr[i] - m[i]) - sum[i];
        } else {
          for (int64_t i = 0; i < w; ++i) qr[i] *= sum[i];
        }
      }
    }
  });
}

}  // namespace

void softmax_backward_last_dim(Tensor& gx, const Tensor& g, const Tensor& y, int64_t rows, int64_t n, bool log) {
  dispatch_floating(y.dtype(), log ? "log_softmax_backward" : "softmax_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* gp = g.data<T>();
    const T* yp = y.data<T>();
    T* out = gx.data<T>();
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1) / 2);
    parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* gr = gp + r * n;
        const T* yr = yp + r * n;
        T* o = out + r * n;
        if (log) {
          const T total = lanes::sum(gr, n);
          for (int64_t i = 0; i < n; ++i) o[i] = gr[i] - exp_of(yr[i]) * total;
        } else {
          const T dot = lanes::dot(gr, yr, n);
          for (int64_t i = 0; i < n; ++i) o[i] = yr[i] * (gr[i] - dot);
        }
      }
    });
  });
}

void softmax(Tensor& out, const Tensor& x, int64_t outer, int64_t n, int64_t inner, bool log) {
  dispatch_math(x.dtype(), log ? "log_softmax" : "softmax", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<T>) {
      throw TypeError(str(log ? "log_softmax" : "softmax", ": expected a floating point input, got ",
                          dtype_name(x.dtype())));
    } else {
      if (inner == 1) last_dim(out.data<T>(), x.data<T>(), outer, n, log);
      else middle_dim(out.data<T>(), x.data<T>(), outer, n, inner, log);
    }
  });
}

}  // namespace ember::cpu
