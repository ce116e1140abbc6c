// The conv family on the CPU. Each op lays a chunk of the batch out as one
// column matrix [C*KH*KW, nb*OH*OW] (im2col) so that a group costs a single
// large GEMM; col2im is the adjoint scatter used by the transposed conv.
// The GEMMs split across ember's threads (core/cpu/blas.h); im2col/col2im
// run as parallel loops over (image, channel) pairs.
#include <ember/core/cpu/conv.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include <ember/core/cpu/blas.h>
#include <ember/core/cpu/parallel.h>
#include <ember/core/dtype.h>
#include <ember/core/error.h>
#include <ember/core/int_math.h>

namespace ember::cpu {

namespace {

// Column matrices above this many elements are split by batch chunks: 16 MB
// of float32 keeps the GEMM large while the chunk stays near the caches.
constexpr int64_t kColumnCap = int64_t(1) << 22;
// One image's column matrix up to this many elements (1 MiB of float32) is
// built and multiplied by one thread while it sits in that core's L2.
constexpr int64_t kPerImageColumnCap = int64_t(1) << 18;
// The per-image weight gradient's partial sums, all threads together (16 MiB of float32).
constexpr int64_t kPartialGradientCap = int64_t(1) << 22;

// Scratch buffers kept per thread and slot between calls: a fresh 10-40 MB
// allocation per conv costs more in page faults than im2col itself.
template <class T>
T* scratch(int slot, int64_t n) {
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t bytes = 0;
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[slot];
  const size_t want = static_cast<size_t>(n) * sizeof(T);
  if (b.bytes < want) {
    b.data.reset(new char[want]);
    b.bytes = want;
  }
  return reinterpret_cast<T*>(b.data.get());
}

struct Dims2 {
  int64_t C, H, W;     // the image side
  int64_t KH, KW;      // the kernel
  int64_t OH, OW;      // the output (window) grid
};

// Valid output columns [lo, hi) for which ow*stride + off lies in [0, size).
inline void valid_range(int64_t off, int64_t stride, int64_t size, int64_t n_out, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : int_math::ceil_div(-off, stride);
  hi = size - off <= 0 ? 0 : int_math::ceil_div(size - off, stride);
  lo = std::min(lo, n_out);
  hi = std::min(std::max(hi, lo), n_out);
}

// Rows c*KH*KW .. of `col` (row length ld, starting at column `col0`) from image plane x [H, W].
template <class T>
void im2col_channel(const T* x, T* col, int64_t ld, int64_t col0, const Dims2& d, const ConvGeom& g) {
  for (int64_t i = 0; i < d.KH; ++i) {
    for (int64_t j = 0; j < d.KW; ++j) {
      T* dst = col + (i * d.KW + j) * ld + col0;
      const int64_t off_w = j * g.dil_w - g.pad_w;
      int64_t lo, hi;
      valid_range(off_w, g.stride_w, d.W, d.OW, lo, hi);
      for (int64_t oh = 0; oh < d.OH; ++oh, dst += d.OW) {
        const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dil_h;
        if (ih < 0 || ih >= d.H) {
          std::fill(dst, dst + d.OW, T(0));
          continue;
        }
        const T* src = x + ih * d.W + off_w;
        std::fill(dst, dst + lo, T(0));
        if (g.stride_w == 1) {
          std::memcpy(dst + lo, src + lo, sizeof(T) * (hi - lo));
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * g.stride_w];
        }
        std::fill(dst + hi, dst + d.OW, T(0));
      }
    }
  }
}

// The adjoint: adds rows of `col` back into image plane x [H, W].
template <class T>
void col2im_channel(const T* col, T* x, int64_t ld, int64_t col0, const Dims2& d, const ConvGeom& g) {
  for (int64_t i = 0; i < d.KH; ++i) {
    for (int64_t j = 0; j < d.KW; ++j) {
      const T* src = col + (i * d.KW + j) * ld + col0;
      const int64_t off_w = j * g.dil_w - g.pad_w;
      int64_t lo, hi;
      valid_range(off_w, g.stride_w, d.W, d.OW, lo, hi);
      for (int64_t oh = 0; oh < d.OH; ++oh, src += d.OW) {
        const int64_t ih = oh * g.stride_h - g.pad_h + i * g.dil_h;
        if (ih < 0 || ih >= d.H) continue;
        T* dst = x + ih * d.W + off_w;
        if (g.stride_w == 1) {
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow] += src[ow];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow * g.stride_w] += src[ow];
        }
      }
    }
  }
}

// Work items per thread chunk for the data movement around the GEMMs (each
// item moves `per_item` elements). The BLAS runs single-threaded inside
// ember's one OpenMP pool (docs/architecture.md), so these loops share the
// cores with the GEMMs instead of fighting a second pool's spinning workers.
int64_t grain_for(int64_t per_item) { return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(per_item, 1)); }

// im2col of images [n0, n0+nb) of x [N, C, H, W] into col [C*KH*KW, nb*L].
template <class T>
void im2col_batch(const T* x, T* col, int64_t n0, int64_t nb, const Dims2& d, const ConvGeom& g) {
  const int64_t L = d.OH * d.OW, ld = nb * L, KK = d.KH * d.KW;
  parallel_for(0, nb * d.C, grain_for(KK * L), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t n = p / d.C, c = p % d.C;
      im2col_channel(x + ((n0 + n) * d.C + c) * d.H * d.W, col + c * KK * ld, ld, n * L, d, g);
    }
  });
}

int64_t chunk_size(int64_t N, int64_t per_image) {
  return std::max<int64_t>(1, std::min<int64_t>(N, kColumnCap / std::max<int64_t>(per_image, 1)));
}

// dst[n, c, :] (planes of length L) <-> src [C, nb*L] for images [n0, n0+nb).
template <class T>
void planes_to_rows(const T* src, T* dst, int64_t n0, int64_t nb, int64_t C, int64_t L) {
  parallel_for(0, nb * C, grain_for(L), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t n = p / C, c = p % C;
      std::memcpy(dst + c * nb * L + n * L, src + ((n0 + n) * C + c) * L, sizeof(T) * L);
    }
  });
}

template <class T>
void rows_to_planes(const T* src, T* dst, int64_t n0, int64_t nb, int64_t C, int64_t L, const T* bias) {
  parallel_for(0, nb * C, grain_for(L), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const int64_t n = p / C, c = p % C;
      const T* s = src + c * nb * L + n * L;
      T* o = dst + ((n0 + n) * C + c) * L;
      if (bias) {
        const T bv = bias[c];
        for (int64_t k = 0; k < L; ++k) o[k] = s[k] + bv;
      } else {
        std::memcpy(o, s, sizeof(T) * L);
      }
    }
  });
}

// One image at a time per thread: its column matrix [K, L] stays in the
// core's cache, and the GEMM writes the output planes [OC, L] in place (no
// staging buffer to transpose back). For batches that give every thread
// images and images whose columns fit the cache.
// Whether the per-image paths suit: enough images to give every thread
// several, and one image's column matrix (`column` elements) within the cap.
bool per_image(int64_t N, int64_t column) { return N >= 4 * get_num_threads() && column <= kPerImageColumnCap; }

template <class T>
void conv2d_per_image(T* op, const T* xp, const T* wp, const T* bp, int64_t N, int64_t OC, const Dims2& d,
                      const ConvGeom& g) {
  const int64_t L = d.OH * d.OW, K = d.C * d.KH * d.KW, Kg = K / g.groups, OCg = OC / g.groups;
  parallel_for(0, N, 1, [&](int64_t b, int64_t e) {
    T* col = scratch<T>(0, K * L);
    for (int64_t n = b; n < e; ++n) {
      im2col_batch(xp, col, n, 1, d, g);  // serial here: parallel_for inside parallel_for runs inline
      T* o = op + n * OC * L;
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        blas::gemm_serial(false, false, OCg, L, Kg, T(1), wp + gi * OCg * Kg, Kg, col + gi * Kg * L, L, T(0),
                          o + gi * OCg * L, L);
      }
      if (bp) {
        for (int64_t c = 0; c < OC; ++c) {
          T* plane = o + c * L;
          for (int64_t k = 0; k < L; ++k) plane[k] += bp[c];
        }
      }
    }
  });
}

template <class T>
void conv2d_impl(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const ConvGeom& g) {
  const int64_t N = x.size(0), OC = w.size(0);
  const Dims2 d{x.size(1), x.size(2), x.size(3), w.size(2), w.size(3), out.size(2), out.size(3)};
  const int64_t L = d.OH * d.OW, K = d.C * d.KH * d.KW, Kg = K / g.groups, OCg = OC / g.groups;
  const T* xp = x.data<T>();
  const T* wp = w.data<T>();
  const T* bp = bias.defined() ? bias.data<T>() : nullptr;
  T* op = out.data<T>();
  if (N == 0 || OC == 0 || L == 0) return;
  if (per_image(N, K * L)) return conv2d_per_image(op, xp, wp, bp, N, OC, d, g);
  const int64_t nb_max = chunk_size(N, K * L);
  T* col = scratch<T>(0, K * nb_max * L);
  T* tmp = scratch<T>(1, OC * nb_max * L);
  for (int64_t n0 = 0; n0 < N; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, N - n0), ld = nb * L;
    im2col_batch(xp, col, n0, nb, d, g);
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      blas::gemm(false, false, OCg, ld, Kg, T(1), wp + gi * OCg * Kg, Kg, col + gi * Kg * ld, ld, T(0),
                 tmp + gi * OCg * ld, ld);
    }
    rows_to_planes(tmp, op, n0, nb, OC, L, bp);
  }
}

template <class T>
void conv_transpose2d_impl(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const ConvGeom& g) {
  // The image side is `out`; x plays the role of conv2d's output.
  const int64_t N = x.size(0), Cin = x.size(1), Cout = out.size(1);
  const Dims2 d{Cout, out.size(2), out.size(3), w.size(2), w.size(3), x.size(2), x.size(3)};
  const int64_t L = d.OH * d.OW, KK = d.KH * d.KW, Cing = Cin / g.groups, Coutg = Cout / g.groups;
  const T* xp = x.data<T>();
  const T* wp = w.data<T>();
  T* op = out.data<T>();
  const int64_t plane = d.H * d.W;
  std::fill(op, op + out.numel(), T(0));
  if (N > 0 && L > 0 && Cin > 0 && Cout > 0 && per_image(N, Cout * KK * L)) {
    // As conv2d_per_image: x's planes [Cin, L] of one image are already the GEMM's operand.
    parallel_for(0, N, 1, [&](int64_t b, int64_t e) {
      T* col = scratch<T>(0, Cout * KK * L);
      for (int64_t n = b; n < e; ++n) {
        for (int64_t gi = 0; gi < g.groups; ++gi) {
          blas::gemm_serial(true, false, Coutg * KK, L, Cing, T(1), wp + gi * Cing * Coutg * KK, Coutg * KK,
                            xp + (n * Cin + gi * Cing) * L, L, T(0), col + gi * Coutg * KK * L, L);
        }
        for (int64_t c = 0; c < Cout; ++c) col2im_channel(col + c * KK * L, op + (n * Cout + c) * plane, L, 0, d, g);
      }
    });
  } else if (N > 0 && L > 0 && Cin > 0 && Cout > 0) {
    const int64_t nb_max = chunk_size(N, std::max(Cout * KK, Cin) * L);
    T* rows = scratch<T>(0, Cin * nb_max * L);
    T* col = scratch<T>(1, Cout * KK * nb_max * L);
    for (int64_t n0 = 0; n0 < N; n0 += nb_max) {
      const int64_t nb = std::min(nb_max, N - n0), ld = nb * L;
      planes_to_rows(xp, rows, n0, nb, Cin, L);
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        blas::gemm(true, false, Coutg * KK, ld, Cing, T(1), wp + gi * Cing * Coutg * KK, Coutg * KK,
                   rows + gi * Cing * ld, ld, T(0), col + gi * Coutg * KK * ld, ld);
      }
      parallel_for(0, nb * Cout, grain_for(KK * L), [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const int64_t n = p / Cout, c = p % Cout;
          col2im_channel(col + c * KK * ld, op + ((n0 + n) * Cout + c) * plane, ld, n * L, d, g);
        }
      });
    }
  }
  if (bias.defined()) {
    const T* bp = bias.data<T>();
    parallel_for(0, N * Cout, grain_for(plane), [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        T* o = op + p * plane;
        const T bv = bp[p % Cout];
        for (int64_t k = 0; k < plane; ++k) o[k] += bv;
      }
    });
  }
}

template <class T>
void conv2d_weight_impl(Tensor& gw, const Tensor& x, const Tensor& gy, const ConvGeom& g) {
  const int64_t N = x.size(0), OC = gw.size(0);
  const Dims2 d{x.size(1), x.size(2), x.size(3), gw.size(2), gw.size(3), gy.size(2), gy.size(3)};
  const int64_t L = d.OH * d.OW, K = d.C * d.KH * d.KW, Kg = K / g.groups, OCg = OC / g.groups;
  T* gp = gw.data<T>();
  std::fill(gp, gp + gw.numel(), T(0));
  if (N == 0 || L == 0 || OC == 0 || K == 0) return;
  const int64_t blocks = get_num_threads(), size = gw.numel();
  // One partial gradient per thread: only while they stay small (a wide layer
  // on many cores would otherwise hold hundreds of MB of partials).
  if (per_image(N, K * L) && blocks * size <= kPartialGradientCap) {
    // As conv2d_per_image, each thread summing its images' products into a
    // partial gradient of its own; the partials are added at the end.
    std::vector<T> partial(static_cast<size_t>(blocks * size), T(0));
    const T* xp = x.data<T>();
    const T* yp = gy.data<T>();
    parallel_for(0, blocks, 1, [&](int64_t b, int64_t e) {
      T* col = scratch<T>(0, K * L);
      for (int64_t blk = b; blk < e; ++blk) {
        for (int64_t n = N * blk / blocks; n < N * (blk + 1) / blocks; ++n) {
          im2col_batch(xp, col, n, 1, d, g);
          for (int64_t gi = 0; gi < g.groups; ++gi) {
            blas::gemm_serial(false, true, OCg, Kg, L, T(1), yp + (n * OC + gi * OCg) * L, L, col + gi * Kg * L, L,
                              T(1), partial.data() + blk * size + gi * OCg * Kg, Kg);
          }
        }
      }
    });
    parallel_for(0, size, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const T* part = partial.data() + blk * size;
        for (int64_t i = b; i < e; ++i) gp[i] += part[i];
      }
    });
    return;
  }
  const int64_t nb_max = chunk_size(N, std::max(K, OC) * L);
  T* col = scratch<T>(0, K * nb_max * L);
  T* rows = scratch<T>(1, OC * nb_max * L);
  for (int64_t n0 = 0; n0 < N; n0 += nb_max) {
    const int64_t nb = std::min(nb_max, N - n0), ld = nb * L;
    im2col_batch(x.data<T>(), col, n0, nb, d, g);
    planes_to_rows(gy.data<T>(), rows, n0, nb, OC, L);
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      blas::gemm(false, true, OCg, Kg, ld, T(1), rows + gi * OCg * ld, ld, col + gi * Kg * ld, ld,
                 T(1), gp + gi * OCg * Kg, Kg);
    }
  }
}

}  // namespace

void conv2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const ConvGeom& g) {
  dispatch_floating(out.dtype(), "conv2d", [&](auto tag) {
    conv2d_impl<typename decltype(tag)::type>(out, x, w, bias, g);
  });
}

void conv_transpose2d(Tensor& out, const Tensor& x, const Tensor& w, const Tensor& bias, const ConvGeom& g) {
  dispatch_floating(out.dtype(), "conv_transpose2d", [&](auto tag) {
    conv_transpose2d_impl<typename decltype(tag)::type>(out, x, w, bias, g);
  });
}

void conv2d_weight(Tensor& gw, const Tensor& x, const Tensor& gy, const ConvGeom& g) {
  dispatch_floating(gw.dtype(), "conv2d", [&](auto tag) {
    conv2d_weight_impl<typename decltype(tag)::type>(gw, x, gy, g);
  });
}

}  // namespace ember::cpu
