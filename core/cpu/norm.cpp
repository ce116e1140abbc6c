// Norm kernels. Statistics come from the row (or channel) while it is in
// cache: a mean pass, then a centered sum of squares (more accurate than
// E[x^2] - E[x]^2 for data far from zero), then one fused normalize + affine
// pass. Row norms (layer_norm, rms_norm) accumulate in vector lanes of the
// input type (core/cpu/vec_lanes.h), 16 partial sums per float32 row; channel
// statistics (batch norm) accumulate in double.
#include <ember/core/cpu/norm.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include <ember/core/cpu/parallel.h>
#include <ember/core/cpu/vec_lanes.h>
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
        // Two passes in vector lanes of T (float keeps 16 partial sums per row): the mean,
        // then the squared deviations from it.
        const T m = rms ? T(0) : lanes::sum(xr, cols) / static_cast<T>(cols);
        const double ss = static_cast<double>(lanes::sum_sq_dev(xr, cols, m));
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

void row_norm_backward(Tensor& gx, Tensor& gw, Tensor& gb, const Tensor& g, const Tensor& x, const Tensor& mean,
                       const Tensor& rstd, const Tensor& w, int64_t rows, int64_t cols, bool rms) {
  dispatch_floating(x.dtype(), "row_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = x.data<T>();
    const T* gp = g.data<T>();
    const T* mp = rms ? nullptr : mean.data<T>();
    const T* rp = rstd.data<T>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    T* gxp = gx.defined() ? gx.data<T>() : nullptr;
    const bool want_params = gw.defined() || gb.defined();
    // Column sums: one [2, cols] partial per chunk of rows, added in chunk order.
    const int64_t chunk = std::max<int64_t>(1, (rows + 63) / 64);
    const int64_t chunks = rows == 0 ? 0 : (rows + chunk - 1) / chunk;
    std::vector<T> partial(want_params ? static_cast<size_t>(chunks * 2 * cols) : 0, T(0));
    parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
      std::vector<T> xhat(static_cast<size_t>(cols)), gxhat(static_cast<size_t>(cols));
      for (int64_t c = c0; c < c1; ++c) {
        T* pw = want_params ? partial.data() + c * 2 * cols : nullptr;
        T* pb = pw ? pw + cols : nullptr;
        for (int64_t r = c * chunk; r < std::min(rows, (c + 1) * chunk); ++r) {
          const T* xr = xp + r * cols;
          const T* gr = gp + r * cols;
          const T m = mp ? mp[r] : T(0), rs = rp[r];
          for (int64_t j = 0; j < cols; ++j) {
            xhat[j] = (xr[j] - m) * rs;
            gxhat[j] = wp ? gr[j] * wp[j] : gr[j];
          }
          if (pw) {
            for (int64_t j = 0; j < cols; ++j) {
              pw[j] += gr[j] * xhat[j];
              pb[j] += gr[j];
            }
          }
          if (!gxp) continue;
          T dot = 0, total = 0;
          for (int64_t j = 0; j < cols; ++j) dot += gxhat[j] * xhat[j];
          if (!rms) total = lanes::sum(gxhat.data(), cols);
          const T a = dot / static_cast<T>(cols), b = total / static_cast<T>(cols);
          T* out = gxp + r * cols;
          for (int64_t j = 0; j < cols; ++j) out[j] = rs * (gxhat[j] - xhat[j] * a - b);
        }
      }
    });
    if (!want_params) return;
    T* gwp = gw.defined() ? gw.data<T>() : nullptr;
    T* gbp = gb.defined() ? gb.data<T>() : nullptr;
    for (int64_t j = 0; j < cols; ++j) {
      T sw = 0, sb = 0;
      for (int64_t c = 0; c < chunks; ++c) {
        sw += partial[static_cast<size_t>(c * 2 * cols + j)];
        sb += partial[static_cast<size_t>(c * 2 * cols + cols + j)];
      }
      if (gwp) gwp[j] = sw;
      if (gbp) gbp[j] = sb;
    }
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
