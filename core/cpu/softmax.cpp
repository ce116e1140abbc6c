// softmax / log_softmax kernels. Numerically stable: the row maximum is
// subtracted before exp. The last dim (inner == 1) is the hot path: one pass
// for the max, one fused pass writing exp and summing it, one scaling pass,
// rows in parallel. Other dims work on whole rows of `inner` elements so the
// loops run along contiguous memory.
#include <ember/core/cpu/softmax.h>

#include <cmath>
#include <limits>
#include <vector>

#include <ember/core/cpu/parallel.h>

namespace ember::cpu {

namespace {

template <class T>
void last_dim(T* out, const T* x, int64_t outer, int64_t n, bool log) {
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1) / 4);
  parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T* p = x + o * n;
      T* q = out + o * n;
      T m = -std::numeric_limits<T>::infinity();
      bool nan = false;
      for (int64_t i = 0; i < n; ++i) {
        m = p[i] > m ? p[i] : m;
        nan = nan || p[i] != p[i];
      }
      if (nan) m = std::numeric_limits<T>::quiet_NaN();
      if (log) {
        T sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += std::exp(p[i] - m);
        // (x - max) - log(sum) keeps the digits that x - (max + log(sum)) loses for large x.
        const T log_sum = std::log(sum);
        for (int64_t i = 0; i < n; ++i) q[i] = (p[i] - m) - log_sum;
      } else {
        T sum = 0;
        for (int64_t i = 0; i < n; ++i) {
          q[i] = std::exp(p[i] - m);
          sum += q[i];
        }
        const T inv = T(1) / sum;
        for (int64_t i = 0; i < n; ++i) q[i] *= inv;
      }
    }
  });
}

template <class T>
void middle_dim(T* out, const T* x, int64_t outer, int64_t n, int64_t inner, bool log) {
  // Split each outer block's inner range into column chunks so small `outer`
  // still uses every thread.
  constexpr int64_t kChunk = 256;
  const int64_t chunks = (inner + kChunk - 1) / kChunk;
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n * kChunk, 1));
  parallel_for(0, outer * chunks, grain, [&](int64_t b, int64_t e) {
    std::vector<T> m(kChunk), sum(kChunk);
    for (int64_t job = b; job < e; ++job) {
      const int64_t o = job / chunks;
      const int64_t i0 = (job % chunks) * kChunk, w = std::min(kChunk, inner - i0);
      const T* p = x + o * n * inner + i0;
      T* q = out + o * n * inner + i0;
      std::fill(m.begin(), m.begin() + w, -std::numeric_limits<T>::infinity());
      std::fill(sum.begin(), sum.begin() + w, T(0));
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t i = 0; i < w; ++i) {
          const T v = p[r * inner + i];
          if (m[i] == m[i] && (v > m[i] || v != v)) m[i] = v;  // a NaN sticks
        }
      }
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t i = 0; i < w; ++i) {
          const T ex = std::exp(p[r * inner + i] - m[i]);
          if (!log) q[r * inner + i] = ex;
          sum[i] += ex;
        }
      }
      for (int64_t i = 0; i < w; ++i) sum[i] = log ? std::log(sum[i]) : T(1) / sum[i];
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t i = 0; i < w; ++i) {
          if (log) q[r * inner + i] = (p[r * inner + i] - m[i]) - sum[i];
          else q[r * inner + i] *= sum[i];
        }
      }
    }
  });
}

}  // namespace

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
