// Pooling on the CPU: one loop nest per op, parallel over planes.
#include <ember/core/cpu/pool.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <ember/core/cpu/parallel.h>
#include <ember/core/error.h>
#include <ember/core/int_math.h>

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

// Planes per thread chunk: small inputs stay on one thread. Pooling sits
// between BLAS-heavy layers, whose spinning workers make an OpenMP fork a
// gamble on shared cores (see core/cpu/conv.cpp), so only large inputs fork.
inline int64_t plane_grain(int64_t plane) {
  return std::max<int64_t>(1, 16 * kElementwiseGrain / std::max<int64_t>(plane, 1));
}

// take ? a : b through bit masks: compilers turn the plain ternary back into
// a branch, which mispredicts on every other comparison of real data.
template <class T>
inline T select(bool take, T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  Bits x, y;
  std::memcpy(&x, &a, sizeof(T));
  std::memcpy(&y, &b, sizeof(T));
  const Bits mask = Bits(0) - static_cast<Bits>(take);
  const Bits r = y ^ ((x ^ y) & mask);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

template <class T>
void max_impl(Tensor& out, Tensor& idx, const Tensor& x, const PoolGeom& g) {
  const int64_t planes = x.numel() / std::max<int64_t>(g.H * g.W, 1);
  const T* xp = x.data<T>();
  T* op = out.data<T>();
  int64_t* ip = idx.data<int64_t>();
  // In-bounds taps [first, last) of each output row and column, computed once
  // (the divisions would otherwise dominate a 2x2 pool).
  const auto taps = [](int64_t n_out, int64_t s, int64_t p, int64_t d, int64_t k, int64_t size) {
    std::vector<std::pair<int64_t, int64_t>> r(static_cast<size_t>(n_out));
    for (int64_t o = 0; o < n_out; ++o) {
      const int64_t first = o * s - p;
      const int64_t lo = first >= 0 ? 0 : int_math::ceil_div(-first, d);
      const int64_t hi = size - first <= 0 ? 0 : std::min(k, int_math::ceil_div(size - first, d));
      r[static_cast<size_t>(o)] = {lo, std::max(lo, hi)};
    }
    return r;
  };
  // Locals, not g's fields: stores through the int64 index pointer could alias those.
  const int64_t H = g.H, W = g.W, OH = g.OH, OW = g.OW, sh = g.sh, sw = g.sw, ph = g.ph, pw = g.pw, dh = g.dh,
                dw = g.dw;
  const auto rows = taps(g.OH, g.sh, g.ph, g.dh, g.kh, g.H), cols = taps(g.OW, g.sw, g.pw, g.dw, g.kw, g.W);
  const bool adaptive = g.adaptive;
  const int64_t kw = g.kw;
  // Output columns [lo, hi) for which kernel column j lands inside the input.
  std::vector<std::pair<int64_t, int64_t>> tap_cols(static_cast<size_t>(adaptive ? 0 : kw));
  for (int64_t j = 0; j < (adaptive ? 0 : kw); ++j) {
    const int64_t off = j * dw - pw;
    int64_t lo = off >= 0 ? 0 : int_math::ceil_div(-off, sw);
    int64_t hi = W - off <= 0 ? 0 : int_math::ceil_div(W - off, sw);
    lo = std::min(lo, OW);
    tap_cols[static_cast<size_t>(j)] = {lo, std::min(std::max(hi, lo), OW)};
  }
  // By value: the sizes stay in registers.
  parallel_for(0, planes, plane_grain(H * W), [=](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const T* src = xp + p * H * W;
      T* o = op + p * OH * OW;
      int64_t* oi = ip + p * OH * OW;
      if (adaptive) {
        for (int64_t oh = 0; oh < OH; ++oh) {
          const Span hs = window(true, oh, H, OH, 0, 0, 0);
          for (int64_t ow = 0; ow < OW; ++ow) {
            const Span ws = window(true, ow, W, OW, 0, 0, 0);
            // PyTorch's rule: start from -inf at the window's first cell; a
            // later value wins when larger or NaN (so NaN propagates).
            T best = -std::numeric_limits<T>::infinity();
            int64_t best_i = hs.begin * W + ws.begin;
            for (int64_t h = hs.begin; h < hs.end; ++h) {
              for (int64_t w = ws.begin; w < ws.end; ++w) {
                const T v = src[h * W + w];
                if (v > best || v != v) best = v, best_i = h * W + w;
              }
            }
            o[oh * OW + ow] = best;
            oi[oh * OW + ow] = best_i;
          }
        }
        continue;
      }
      // Fixed windows: the output row is the accumulator, and each kernel tap
      // sweeps it once. Iterations are independent, so the selects stay
      // branch-free and the loop pipelines (a per-window loop mispredicts on
      // every other comparison of real data).
      for (int64_t oh = 0; oh < OH; ++oh) {
        T* __restrict orow = o + oh * OW;
        int64_t* __restrict irow = oi + oh * OW;
        const auto [i0, i1] = rows[static_cast<size_t>(oh)];
        const int64_t h_first = oh * sh - ph;
        for (int64_t ow = 0; ow < OW; ++ow) {
          orow[ow] = -std::numeric_limits<T>::infinity();
          const auto [j0, j1] = cols[static_cast<size_t>(ow)];
          irow[ow] = i0 < i1 && j0 < j1 ? (h_first + i0 * dh) * W + ow * sw - pw + j0 * dw : 0;
        }
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t h = h_first + i * dh;
          for (int64_t j = 0; j < kw; ++j) {
            const auto [lo, hi] = tap_cols[static_cast<size_t>(j)];
            const int64_t base = h * W + j * dw - pw;
            const T* __restrict r = src + base;
            for (int64_t ow = lo; ow < hi; ++ow) {
              const T v = r[ow * sw], cur = orow[ow];
              const bool take = (v > cur) | (v != v);
              orow[ow] = select(take, v, cur);
              irow[ow] = select(take, base + ow * sw, irow[ow]);
            }
          }
        }
      }
    }
  });
}

// Calls f(plane offset in, plane offset out, h0, h1, w0, w1, divisor) per output cell.
template <class F>
void for_each_average(const PoolGeom& g, int64_t planes, const F& f) {
  parallel_for(0, planes, plane_grain(g.H * g.W), [&](int64_t b, int64_t e) {
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
    op[o] = div != 0 ? acc / static_cast<T>(div) : T(0);  // a negative divisor_override divides too
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
    if (div == 0) return;
    const T v = gp[o] / static_cast<T>(div);
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) xp[in0 + h * g.W + w] += v;
  });
}

}  // namespace

void max_pool2d(Tensor& out, Tensor& indices, const Tensor& x, const PoolGeom& g) {
  dispatch_floating(x.dtype(), "max_pool2d", [&](auto tag) {
    max_impl<typename decltype(tag)::type>(out, indices, x, g);
  });
}

void avg_pool2d(Tensor& out, const Tensor& x, const PoolGeom& g) {
  dispatch_floating(x.dtype(), "avg_pool2d", [&](auto tag) {
    avg_impl<typename decltype(tag)::type>(out, x, g);
  });
}

void avg_pool2d_backward(Tensor& gx, const Tensor& gy, const PoolGeom& g) {
  dispatch_floating(gy.dtype(), "avg_pool2d", [&](auto tag) {
    avg_backward_impl<typename decltype(tag)::type>(gx, gy, g);
  });
}

}  // namespace ember::cpu
