// cross_entropy kernels: the log-sum-exp of each position's class column is
// taken around its maximum (stable for any logits), and the picked logit is
// subtracted in the same pass, so no log-probability tensor is materialized.
// Positions run in parallel; classes are `inner` apart (contiguous when the
// class dim is last).
#include <ember/core/cpu/loss.h>

#include <cmath>
#include <limits>

#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {

namespace {

template <class F>
void dispatch_float(DType t, const char* op, const F& f) {
  if (t == DType::Float32) f(float{});
  else if (t == DType::Float64) f(double{});
  else throw Error(str(op, ": kernel expects float32 or float64, got ", dtype_name(t)));
}

int64_t position_grain(int64_t classes) { return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(classes, 1)); }

}  // namespace

void cross_entropy_forward(Tensor& loss, Tensor& wt, Tensor& lse, const Tensor& x, const Tensor& target,
                           const Tensor& weight, int64_t ignore_index, int64_t outer, int64_t classes,
                           int64_t inner) {
  dispatch_float(x.dtype(), "cross_entropy", [&](auto zero) {
    using T = decltype(zero);
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
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t c = 0; c < classes; ++c) m = std::max(m, col[c * inner]);
        double s = 0;
        if (std::isinf(m) && m < 0) {
          s = 0;  // every logit is -inf: lse = -inf
        } else {
          for (int64_t c = 0; c < classes; ++c) s += std::exp(static_cast<double>(col[c * inner] - m));
        }
        const T l = std::isnan(m) ? m : static_cast<T>(static_cast<double>(m) + std::log(s));
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
  dispatch_float(x.dtype(), "cross_entropy_backward", [&](auto zero) {
    using T = decltype(zero);
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
        for (int64_t c = 0; c < classes; ++c) out[c * inner] = scale * std::exp(col[c * inner] - l);
        const int64_t t = tp[p];
        if (t != ignore_index) out[t * inner] -= scale;
      }
    });
  });
}

}  // namespace ember::cpu
