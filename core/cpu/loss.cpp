// cross_entropy kernels: the log-sum-exp of each position's class column is
// taken around its maximum (stable for any logits), and the picked logit is
// subtracted in the same pass, so no log-probability tensor is materialized.
// Positions run in parallel; classes are `inner` apart (contiguous when the
// class dim is last).
#include <ember/core/cpu/loss.h>

#include <cmath>
#include <limits>

#include <ember/core/cpu/fast_math.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {

namespace {

inline float exp_of(float x) { return fast::exp(x); }  // vectorizes, < 1 ulp
inline double exp_of(double x) { return std::exp(x); }

// max and sum(exp(x - max)) of a contiguous row in 16 lanes (vectorizes).
template <class T>
T row_logsumexp(const T* p, int64_t n) {
  constexpr int L = 16;
  T lanes[L];
  for (int l = 0; l < L; ++l) lanes[l] = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    for (int l = 0; l < L; ++l) lanes[l] = p[i + l] > lanes[l] ? p[i + l] : lanes[l];
  }
  T m = -std::numeric_limits<T>::infinity();
  bool nan = false;
  for (int l = 0; l < L; ++l) m = lanes[l] > m ? lanes[l] : m;
  for (; i < n; ++i) m = p[i] > m ? p[i] : m;
  for (int64_t j = 0; j < n; ++j) nan = nan || p[j] != p[j];
  if (nan) return std::numeric_limits<T>::quiet_NaN();
  if (std::isinf(m)) return m;  // +inf, or all -inf (the loss is then NaN / inf as in torch)
  T sums[L] = {};
  i = 0;
  for (; i + L <= n; i += L) {
    for (int l = 0; l < L; ++l) sums[l] += exp_of(p[i + l] - m);
  }
  T s = 0;
  for (int l = 0; l < L; ++l) s += sums[l];
  for (; i < n; ++i) s += exp_of(p[i] - m);
  return m + std::log(s);
}

// The same down a column of stride `inner`.
template <class T>
T column_logsumexp(const T* col, int64_t n, int64_t inner) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t c = 0; c < n; ++c) {
    const T v = col[c * inner];
    if (v != v) return v;
    m = v > m ? v : m;
  }
  if (std::isinf(m)) return m;
  T s = 0;
  for (int64_t c = 0; c < n; ++c) s += exp_of(col[c * inner] - m);
  return m + std::log(s);
}

int64_t position_grain(int64_t classes) { return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(classes, 1)); }

}  // namespace

void cross_entropy_forward(Tensor& loss, Tensor& wt, Tensor& lse, const Tensor& x, const Tensor& target,
                           const Tensor& weight, int64_t ignore_index, int64_t outer, int64_t classes,
                           int64_t inner) {
  dispatch_floating(x.dtype(), "cross_entropy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    const int64_t* tp = target.data<int64_t>();
    const T* wp = weight.defined() ? weight.data<T>() : nullptr;
    T* lp = loss.data<T>();
    T* wtp = wt.data<T>();
    T* sp = lse.data<T>();
    parallel_for(0, outer * inner, position_grain(classes), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t o = p / inner, i = p % inner;
        const T* col = xp + o * classes * inner + i;
        const T l = inner == 1 ? row_logsumexp(col, classes) : column_logsumexp(col, classes, inner);
        sp[p] = l;
        const int64_t t = tp[p];
        if (t == ignore_index) {
          wtp[p] = 0;
          lp[p] = 0;
        } else {
          const T w = wp ? wp[t] : T(1);
          wtp[p] = w;
          lp[p] = w * (l - col[t * inner]);
        }
      }
    });
  });
}

void cross_entropy_backward(Tensor& gx, const Tensor& gl, const Tensor& wt, const Tensor& lse, const Tensor& x,
                            const Tensor& target, int64_t ignore_index, int64_t outer, int64_t classes,
                            int64_t inner) {
  dispatch_floating(x.dtype(), "cross_entropy_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    const int64_t* tp = target.data<int64_t>();
    const T* gp = gl.data<T>();
    const T* wtp = wt.data<T>();
    const T* sp = lse.data<T>();
    T* op = gx.data<T>();
    parallel_for(0, outer * inner, position_grain(classes), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t o = p / inner, i = p % inner;
        const T* col = xp + o * classes * inner + i;
        T* out = op + o * classes * inner + i;
        const T scale = gp[p] * wtp[p];
        const T l = sp[p];
        if (inner == 1) {
          for (int64_t c = 0; c < classes; ++c) out[c] = scale * exp_of(col[c] - l);
        } else {
          for (int64_t c = 0; c < classes; ++c) out[c * inner] = scale * exp_of(col[c * inner] - l);
        }
        const int64_t t = tp[p];
        if (t != ignore_index) out[t * inner] -= scale;
      }
    });
  });
}

}  // namespace ember::cpu
