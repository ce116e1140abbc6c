// Column-wise reduction kernels: arg-extremes (max/min with indices), the
// running sum, and two helpers of backward formulas (products of the other
// elements for prod; elementwise coefficients for max/norm).
#include <cmath>
#include <limits>
#include <vector>

#include <ember/core/cpu/loops.h>
#include <ember/core/cpu/reduce.h>
#include <ember/core/cpu/reduce_columns.h>

namespace ember::cpu {

void arg_reduce(bool is_max, Tensor& values, Tensor& indices, const Tensor& x, int64_t outer, int64_t reduced,
                int64_t inner) {
  dispatch_math(x.dtype(), is_max ? "argmax" : "argmin", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* vals = values.defined() ? values.data<T>() : nullptr;
    int64_t* idxs = indices.data<int64_t>();
    for_each_column(x.data<T>(), outer, reduced, inner, [&](int64_t idx, const T* p, int64_t s) {
      T best = p[0];
      int64_t at = 0;
      for (int64_t r = 1; r < reduced; ++r) {
        if constexpr (std::is_floating_point_v<T>) {
          if (best != best) break;  // the first NaN wins
        }
        const T v = p[r * s];
        bool better = is_max ? v > best : v < best;
        if constexpr (std::is_floating_point_v<T>) better = better || v != v;
        if (better) {
          best = v;
          at = r;
        }
      }
      idxs[idx] = at;
      if (vals) vals[idx] = best;
    });
  });
}

void cumsum(Tensor& out, const Tensor& x, int64_t outer, int64_t length, int64_t inner) {
  dispatch_math(x.dtype(), "cumsum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("cumsum: bool inputs are summed as int64; convert first");
    } else {
      // Integers run in uint64_t: overflow wraps around (as in PyTorch) instead of being undefined.
      using A = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
      T* o = out.data<T>();
      const T* base = x.data<T>();
      for_each_column(base, outer, length, inner, [&](int64_t, const T* p, int64_t s) {
        T* q = o + (p - base);
        A acc = 0;
        for (int64_t r = 0; r < length; ++r) {
          acc += static_cast<A>(p[r * s]);
          q[r * s] = static_cast<T>(acc);
        }
      });
    }
  });
}

void prod_others(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  dispatch_math(x.dtype(), "prod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<T>) {
      throw TypeError("prod: backward needs a floating point input");
    } else {
      T* o = out.data<T>();
      const T* base = x.data<T>();
      // Exclusive prefix products, then multiplied by exclusive suffix products:
      // no division, so zeros are handled exactly.
      for_each_column(base, outer, reduced, inner, [&](int64_t, const T* p, int64_t s) {
        T* q = o + (p - base);
        double acc = 1;
        for (int64_t r = 0; r < reduced; ++r) {
          q[r * s] = static_cast<T>(acc);
          acc *= p[r * s];
        }
        acc = 1;
        for (int64_t r = reduced - 1; r >= 0; --r) {
          q[r * s] = static_cast<T>(q[r * s] * acc);
          acc *= p[r * s];
        }
      });
    }
  });
}

void grad_coeff(GradCoeff kind, Tensor& out, const Tensor& a, const Tensor& b, double p) {
  TensorIterator it({out, a, b});
  dispatch_math(out.dtype(), "grad_coeff", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_floating_point_v<T>) {
      throw TypeError("grad_coeff: expected a floating point output");
    } else {
      auto sign = [](T v) { return static_cast<T>((v > T(0)) - (v < T(0))); };
      switch (kind) {
        case GradCoeff::EqMask: return map<T, T, T>(it, [](T u, T v) { return static_cast<T>(u == v); });
        case GradCoeff::AbsEqMask:
          return map<T, T, T>(it, [](T u, T v) { return static_cast<T>(std::abs(u) == v); });
        case GradCoeff::Sign: return map<T, T, T>(it, [sign](T u, T) { return sign(u); });
        case GradCoeff::NormPow:
          return map<T, T, T>(it, [sign, p](T u, T n) {
            if (n == T(0)) return T(0);
            return static_cast<T>(sign(u) * std::pow(std::abs(static_cast<double>(u)) / n, p - 1));
          });
      }
    }
  });
}

}  // namespace ember::cpu
