// Pooling on the CPU: one loop nest per op, parallel over planes.
#include <ember/core/cpu/pool.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>

namespace ember::cpu {

namespace {

// Rows [begin, end) of input read by output row o along one dim, before
// clipping to the input (so averages can count padding).
struct Span {
  int64_t begin, end;
};

inline Span window(bool adaptive, int64_t o, int64_t in, int64_t out, int64_t k, int64_t s, int64_t p) {
  if (adaptive) return {(o * in) / out, ((o + 1) * in + out - 1) / out};
  const int64_t b = o * s - p;
  return {b, std::min(b + k, in + p)};
}

template <class T>
void max_impl(Tensor& out, Tensor& idx, const Tensor& x, const PoolGeom& g) {
  const int64_t planes = x.numel() / std::max<int64_t>(g.H * g.W, 1);
  const T* xp = x.data<T>();
  T* op = out.data<T>();
  int64_t* ip = idx.data<int64_t>();
  parallel_for(0, planes, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* src = xp + p * g.H * g.W;
      T* o = op + p * g.OH * g.OW;
      int64_t* oi = ip + p * g.OH * g.OW;
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          // The first element of the window seeds the max; later ones win when
          // larger, and a NaN wins and stays (PyTorch propagates NaN).
          T best = T(0);
          int64_t best_i = -1;
          const auto visit = [&](int64_t h, int64_t w) {
            const T v = src[h * g.W + w];
            if (best_i < 0 || v > best || (v != v && best == best)) best = v, best_i = h * g.W + w;
          };
          if (g.adaptive) {
            const Span hs = window(true, oh, g.H, g.OH, 0, 0, 0), ws = window(true, ow, g.W, g.OW, 0, 0, 0);
            for (int64_t h = hs.begin; h < hs.end; ++h)
              for (int64_t w = ws.begin; w < ws.end; ++w) visit(h, w);
          } else {
            // Taps inside the input: i in [i0, i1), j in [j0, j1).
            const int64_t h_first = oh * g.sh - g.ph, w_first = ow * g.sw - g.pw;
            const int64_t i0 = h_first >= 0 ? 0 : (-h_first + g.dh - 1) / g.dh;
            const int64_t j0 = w_first >= 0 ? 0 : (-w_first + g.dw - 1) / g.dw;
            const int64_t i1 = std::min(g.kh, (g.H - h_first + g.dh - 1) / g.dh);
            const int64_t j1 = std::min(g.kw, (g.W - w_first + g.dw - 1) / g.dw);
            for (int64_t i = i0; i < i1; ++i)
              for (int64_t j = j0; j < j1; ++j) visit(h_first + i * g.dh, w_first + j * g.dw);
          }
          o[oh * g.OW + ow] = best_i < 0 ? -std::numeric_limits<T>::infinity() : best;
          oi[oh * g.OW + ow] = std::max<int64_t>(best_i, 0);
        }
      }
    }
  });
}

// Calls f(plane offset in, plane offset out, h0, h1, w0, w1, divisor) per output cell.
template <class F>
void for_each_average(const PoolGeom& g, int64_t planes, const F& f) {
  parallel_for(0, planes, 1, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        const Span hs = window(g.adaptive, oh, g.H, g.OH, g.kh, g.sh, g.ph);
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const Span ws = window(g.adaptive, ow, g.W, g.OW, g.kw, g.sw, g.pw);
          const int64_t padded = (hs.end - hs.begin) * (ws.end - ws.begin);
          const int64_t h0 = std::max<int64_t>(hs.begin, 0), h1 = std::min(hs.end, g.H);
          const int64_t w0 = std::max<int64_t>(ws.begin, 0), w1 = std::min(ws.end, g.W);
          const int64_t div = g.divisor_override ? g.divisor_override
                              : (g.count_include_pad && !g.adaptive) ? padded
                                                                     : (h1 - h0) * (w1 - w0);
          f(p * g.H * g.W, p * g.OH * g.OW + oh * g.OW + ow, h0, h1, w0, w1, div);
        }
      }
    }
  });
}

template <class T>
void avg_impl(Tensor& out, const Tensor& x, const PoolGeom& g) {
  const int64_t planes = out.numel() / std::max<int64_t>(g.OH * g.OW, 1);
  const T* xp = x.data<T>();
  T* op = out.data<T>();
  for_each_average(g, planes, [&](int64_t in0, int64_t o, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                                  int64_t div) {
    T acc = 0;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) acc += xp[in0 + h * g.W + w];
    op[o] = div > 0 ? acc / static_cast<T>(div) : T(0);
  });
}

template <class T>
void avg_backward_impl(Tensor& gx, const Tensor& gy, const PoolGeom& g) {
  const int64_t planes = gy.numel() / std::max<int64_t>(g.OH * g.OW, 1);
  const T* gp = gy.data<T>();
  T* xp = gx.data<T>();
  std::fill(xp, xp + gx.numel(), T(0));
  // Parallel over planes: each plane's windows write only into that plane.
  for_each_average(g, planes, [&](int64_t in0, int64_t o, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                                  int64_t div) {
    if (div <= 0) return;
    const T v = gp[o] / static_cast<T>(div);
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) xp[in0 + h * g.W + w] += v;
  });
}

template <class F>
void float_dispatch(DType t, const char* op, F&& f) {
  if (t == DType::Float32) return f(float{});
  if (t == DType::Float64) return f(double{});
  throw Error(str(op, ": CPU kernel not implemented for ", dtype_name(t)));
}

}  // namespace

void max_pool2d(Tensor& out, Tensor& indices, const Tensor& x, const PoolGeom& g) {
  float_dispatch(x.dtype(), "max_pool2d", [&](auto v) { max_impl<decltype(v)>(out, indices, x, g); });
}

void avg_pool2d(Tensor& out, const Tensor& x, const PoolGeom& g) {
  float_dispatch(x.dtype(), "avg_pool2d", [&](auto v) { avg_impl<decltype(v)>(out, x, g); });
}

void avg_pool2d_backward(Tensor& gx, const Tensor& gy, const PoolGeom& g) {
  float_dispatch(gy.dtype(), "avg_pool2d", [&](auto v) { avg_backward_impl<decltype(v)>(gx, gy, g); });
}

}  // namespace ember::cpu
