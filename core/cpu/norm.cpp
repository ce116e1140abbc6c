// Norm kernels. Statistics come from the row (or channel) while it is in
// cache: a mean pass, then a centered sum of squares (more accurate than
// E[x^2] - E[x]^2 for data far from zero), then one fused normalize + affine
// pass. Accumulation is in double for float32 inputs.
#include <ember/core/cpu/norm.h>

#include <cmath>
#include <type_traits>

#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {

namespace {

// Grain in rows so a chunk has roughly kElementwiseGrain elements.
int64_t row_grain(int64_t cols) { return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(cols, 1)); }

}  // namespace

void row_norm(Tensor& out, Tensor& mean, Tensor& rstd, const Tensor& x, const Tensor& w, const Tensor& b,
              int64_t rows, int64_t cols, double eps, bool rms) {
  dispatch_floating(x.dtype(), "row_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    T* mp = rms ? nullptr : mean.data<T>();
    T* rp = rstd.data<T>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    const T* bp = b.defined() ? b.data<T>() : nullptr;
    parallel_for(0, rows, row_grain(cols), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = xp + r * cols;
        T* yr = op + r * cols;
        double mu = 0;
        if (!rms) {
          for (int64_t j = 0; j < cols; ++j) mu += xr[j];
          mu /= static_cast<double>(cols);
        }
        double ss = 0;
        const T m = static_cast<T>(mu);
        for (int64_t j = 0; j < cols; ++j) {
          const double d = static_cast<double>(xr[j] - m);
          ss += d * d;
        }
        const T rs = static_cast<T>(1.0 / std::sqrt(ss / static_cast<double>(cols) + eps));
        if (mp) mp[r] = m;
        rp[r] = rs;
        if (wp && bp) {
          for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * rs * wp[j] + bp[j];
        } else if (wp) {
          for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * rs * wp[j];
        } else if (bp) {
          for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * rs + bp[j];
        } else {
          for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] - m) * rs;
        }
      }
    });
  });
}

void channel_moments(Tensor& mean, Tensor& var, const Tensor& x, int64_t n, int64_t c, int64_t inner) {
  dispatch_floating(x.dtype(), "channel_moments", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    T* mp = mean.data<T>();
    T* vp = var.data<T>();
    const double count = static_cast<double>(n * inner);
    parallel_for(0, c, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n * inner, 1)),
                 [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        double s = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T* p = xp + (i * c + ch) * inner;
          for (int64_t k = 0; k < inner; ++k) s += p[k];
        }
        const double mu = s / count;
        double ss = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T* p = xp + (i * c + ch) * inner;
          for (int64_t k = 0; k < inner; ++k) {
            const double d = static_cast<double>(p[k]) - mu;
            ss += d * d;
          }
        }
        mp[ch] = static_cast<T>(mu);
        vp[ch] = static_cast<T>(ss / count);
      }
    });
  });
}

void channel_affine(Tensor& out, const Tensor& x, const Tensor& scale, const Tensor& shift, int64_t n, int64_t c,
                    int64_t inner) {
  dispatch_floating(x.dtype(), "channel_affine", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const T* sp = scale.data<T>();
    const T* hp = shift.data<T>();
    parallel_for(0, n * c, row_grain(inner), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const T a = sp[p % c], s = hp[p % c];
        const T* xr = xp + p * inner;
        T* yr = op + p * inner;
        for (int64_t k = 0; k < inner; ++k) yr[k] = xr[k] * a + s;
      }
    });
  });
}

void channel_norm_backward(Tensor& gx, Tensor& sum_g, Tensor& sum_gxhat, const Tensor& g, const Tensor& x,
                           const Tensor& mean, const Tensor& rstd, const Tensor& w, int64_t n, int64_t c,
                           int64_t inner, bool batch_stats) {
  dispatch_floating(x.dtype(), "channel_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* gp = g.data<T>();
    const T* xp = x.data<T>();
    const T* mp = mean.data<T>();
    const T* rp = rstd.data<T>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    T* sgp = sum_g.data<T>();
    T* sxp = sum_gxhat.data<T>();
    parallel_for(0, c, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n * inner, 1)),
                 [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        double sg = 0, sx = 0;
        const T m = mp[ch], r = rp[ch];
        for (int64_t i = 0; i < n; ++i) {
          const T* gr = gp + (i * c + ch) * inner;
          const T* xr = xp + (i * c + ch) * inner;
          for (int64_t k = 0; k < inner; ++k) {
            sg += gr[k];
            sx += static_cast<double>(gr[k] * ((xr[k] - m) * r));
          }
        }
        sgp[ch] = static_cast<T>(sg);
        sxp[ch] = static_cast<T>(sx);
      }
    });
    if (!gx.defined()) return;
    T* op = gx.data<T>();
    const T count = static_cast<T>(n * inner);
    parallel_for(0, n * c, row_grain(inner), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t ch = p % c;
        const T m = mp[ch], r = rp[ch], scale = r * (wp ? wp[ch] : T(1));
        const T* gr = gp + p * inner;
        const T* xr = xp + p * inner;
        T* yr = op + p * inner;
        if (batch_stats) {
          const T mg = sgp[ch] / count, mx = sxp[ch] / count;
          for (int64_t k = 0; k < inner; ++k) yr[k] = scale * (gr[k] - mg - (xr[k] - m) * r * mx);
        } else {
          for (int64_t k = 0; k < inner; ++k) yr[k] = scale * gr[k];
        }
      }
    });
  });
}

}  // namespace ember::cpu
