// Reductions that need more than one fold: variance / standard deviation
// (two passes for accuracy), vector norms and logsumexp (max shift). Inputs
// are float32 or float64; accumulation is in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include <ember/core/cpu/fast_math.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/cpu/reduce.h>
#include <ember/core/cpu/reduce_columns.h>
#include <ember/core/cpu/vec_lanes.h>

namespace ember::cpu {

namespace {

template <class F>
void floating(const Tensor& x, const char* op, F&& f) {
  dispatch_math(x.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) f(T{});
    else throw TypeError(str(op, ": expected a floating point input, got ", dtype_name(x.dtype())));
  });
}

// The sum over r of f(q[r * s]) in double. A contiguous column adds in eight
// lanes (the adds vectorize), combined in a fixed order; a long one is cut
// into a fixed number of pieces summed in parallel, so the result does not
// depend on the thread count.
template <class T, class F>
double column_sum(const T* q, int64_t n, int64_t s, const F& f) {
  if (s != 1) {
    double acc = 0;
    for (int64_t r = 0; r < n; ++r) acc += f(static_cast<double>(q[r * s]));
    return acc;
  }
  constexpr int64_t kLongColumn = int64_t{1} << 18, kPieces = 16;
  if (n >= kLongColumn) {
    double partial[kPieces];
    parallel_for(0, kPieces, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        const int64_t lo = n * c / kPieces, hi = n * (c + 1) / kPieces;
        partial[c] = column_sum(q + lo, hi - lo, 1, f);  // a piece still that long splits again, inline
      }
    });
    double acc = 0;
    for (double v : partial) acc += v;
    return acc;
  }
  constexpr int L = 8;
  double lanes[L] = {};
  int64_t r = 0;
  for (; r + L <= n; r += L) {
    for (int l = 0; l < L; ++l) lanes[l] += f(static_cast<double>(q[r + l]));
  }
  double acc = 0;
  for (; r < n; ++r) acc += f(static_cast<double>(q[r]));
  for (double v : lanes) acc += v;
  return acc;
}

}  // namespace

void var(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner, double correction,
         bool take_sqrt) {
  floating(x, take_sqrt ? "std" : "var", [&](auto zero) {
    using T = decltype(zero);
    T* o = out.data<T>();
    const double n = static_cast<double>(reduced);
    const double denom = std::max(0.0, n - correction);
    if (inner > 1) {
      // Columns in chunks: each pass reads whole rows of a chunk (contiguous,
      // vectorized) into per-column accumulators, instead of walking every
      // column `inner` elements at a time.
      constexpr int64_t kChunk = 256;
      const int64_t chunks = (inner + kChunk - 1) / kChunk;
      const T* in = x.data<T>();
      parallel_for(0, outer * chunks, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(reduced * kChunk, 1)),
                   [&](int64_t b, int64_t e) {
        double mean[kChunk], sq[kChunk];
        for (int64_t job = b; job < e; ++job) {
          const int64_t ob = job / chunks, i0 = job % chunks * kChunk, w = std::min(kChunk, inner - i0);
          const T* block = in + ob * reduced * inner + i0;
          std::fill(mean, mean + w, 0.0);
          std::fill(sq, sq + w, 0.0);
          for (int64_t r = 0; r < reduced; ++r)
            for (int64_t i = 0; i < w; ++i) mean[i] += block[r * inner + i];
          for (int64_t i = 0; i < w; ++i) mean[i] /= n;
          for (int64_t r = 0; r < reduced; ++r) {
            for (int64_t i = 0; i < w; ++i) {
              const double d = block[r * inner + i] - mean[i];
              sq[i] += d * d;
            }
          }
          T* dst = o + ob * inner + i0;
          for (int64_t i = 0; i < w; ++i) {
            const double v = sq[i] / denom;
            dst[i] = static_cast<T>(take_sqrt ? std::sqrt(v) : v);
          }
        }
      });
      return;
    }
    for_each_column(x.data<T>(), outer, reduced, inner, [&](int64_t idx, const T* p, int64_t s) {
      double sum = 0;
      for (int64_t r = 0; r < reduced; ++r) sum += p[r * s];
      const double mean = sum / n;
      double sq = 0;
      for (int64_t r = 0; r < reduced; ++r) {
        const double d = p[r * s] - mean;
        sq += d * d;
      }
      const double v = sq / denom;
      o[idx] = static_cast<T>(take_sqrt ? std::sqrt(v) : v);
    });
  });
}

void norm(Tensor& out, const Tensor& x, double p, int64_t outer, int64_t reduced, int64_t inner) {
  floating(x, "norm", [&](auto zero) {
    using T = decltype(zero);
    T* o = out.data<T>();
    const T* in = x.data<T>();
    if (std::isinf(p)) {
      const bool is_max = p > 0;
      for_each_column(in, outer, reduced, inner, [&](int64_t idx, const T* q, int64_t s) {
        double acc = is_max ? 0.0 : std::numeric_limits<double>::infinity();
        for (int64_t r = 0; r < reduced; ++r) {
          const double a = std::abs(static_cast<double>(q[r * s]));
          if (a != a || (is_max ? a > acc : a < acc)) acc = a;
          if (acc != acc) break;  // NaN propagates
        }
        o[idx] = static_cast<T>(acc);
      });
      return;
    }
    for_each_column(in, outer, reduced, inner, [&](int64_t idx, const T* q, int64_t s) {
      double acc = 0;
      if (p == 2) {
        acc = std::sqrt(column_sum(q, reduced, s, [](double v) { return v * v; }));
      } else if (p == 1) {
        acc = column_sum(q, reduced, s, [](double v) { return std::abs(v); });
      } else if (p == 0) {
        for (int64_t r = 0; r < reduced; ++r) acc += q[r * s] != T(0) ? 1.0 : 0.0;
      } else {
        for (int64_t r = 0; r < reduced; ++r) acc += std::pow(std::abs(static_cast<double>(q[r * s])), p);
        acc = std::pow(acc, 1.0 / p);
      }
      o[idx] = static_cast<T>(acc);
    });
  });
}

void logsumexp(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  floating(x, "logsumexp", [&](auto zero) {
    using T = decltype(zero);
    T* o = out.data<T>();
    for_each_column(x.data<T>(), outer, reduced, inner, [&](int64_t idx, const T* p, int64_t s) {
      double m = -std::numeric_limits<double>::infinity();
      bool nan = false;
      if (s == 1) {
        m = lanes::max(p, reduced, nan);
      } else {
        for (int64_t r = 0; r < reduced; ++r) {
          const double v = p[r * s];
          nan = nan || v != v;
          m = v > m ? v : m;
        }
      }
      if (nan) {
        o[idx] = std::numeric_limits<T>::quiet_NaN();
        return;
      }
      // All -inf (or empty) gives -inf; a +inf gives +inf: no shift would make them finite.
      if (std::isinf(m)) {
        o[idx] = static_cast<T>(m);
        return;
      }
      double sum = 0;
      if constexpr (std::is_same_v<T, float>) {
        if (s == 1) {
          // float32 rows: fast::exp into 16 float lanes (it vectorizes; std::exp
          // on doubles does not), each block's lanes added in double.
          const float mf = static_cast<float>(m);
          constexpr int64_t kBlock = 4096;
          constexpr int L = 16;
          for (int64_t b = 0; b < reduced; b += kBlock) {
            const int64_t e = std::min(reduced, b + kBlock);
            float acc[L] = {};
            int64_t r = b;
            for (; r + L <= e; r += L) {
              for (int l = 0; l < L; ++l) acc[l] += fast::exp(p[r + l] - mf);
            }
            for (; r < e; ++r) acc[0] += fast::exp(p[r] - mf);
            for (int l = 0; l < L; ++l) sum += acc[l];
          }
          o[idx] = static_cast<T>(m + std::log(sum));
          return;
        }
      }
      for (int64_t r = 0; r < reduced; ++r) sum += std::exp(static_cast<double>(p[r * s]) - m);
      o[idx] = static_cast<T>(m + std::log(sum));
    });
  });
}

}  // namespace ember::cpu
