// Reductions that need more than one fold: variance / standard deviation
// (two passes for accuracy), vector norms and logsumexp (max shift). Inputs
// are float32 or float64; accumulation is in double.
#include <cmath>
#include <limits>

#include <ember/core/cpu/reduce.h>
#include <ember/core/cpu/reduce_columns.h>

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

}  // namespace

void var(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner, double correction,
         bool take_sqrt) {
  floating(x, take_sqrt ? "std" : "var", [&](auto zero) {
    using T = decltype(zero);
    T* o = out.data<T>();
    const double n = static_cast<double>(reduced);
    const double denom = std::max(0.0, n - correction);
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
        for (int64_t r = 0; r < reduced; ++r) acc += static_cast<double>(q[r * s]) * q[r * s];
        acc = std::sqrt(acc);
      } else if (p == 1) {
        for (int64_t r = 0; r < reduced; ++r) acc += std::abs(static_cast<double>(q[r * s]));
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
      for (int64_t r = 0; r < reduced; ++r) {
        const double v = p[r * s];
        nan = nan || v != v;
        m = v > m ? v : m;
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
      for (int64_t r = 0; r < reduced; ++r) sum += std::exp(static_cast<double>(p[r * s]) - m);
      o[idx] = static_cast<T>(m + std::log(sum));
    });
  });
}

}  // namespace ember::cpu
