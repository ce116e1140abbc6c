// The pooling kernels (cuda/pool.cu launches them): one thread per output
// cell walks its window (fixed or adaptive, as core/cpu/pool.cpp defines
// them); the backward passes add into the input gradient with atomics, since
// windows may overlap. Device code only, in a header so that
// tests/cpp/test_pool_emulation.cpp runs the same source on the CPU
// (tests/cpp/cuda_emulation.h) against the CPU kernels.
#pragma once
#include <cstdint>

#include <ember/core/cpu/pool.h>
#include <ember/cuda/device/float_access.cuh>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

constexpr int kPoolThreads = 256;

__device__ __forceinline__ void add(float* p, int64_t i, float v) { atomicAdd(p + i, v); }
__device__ __forceinline__ void add(double* p, int64_t i, double v) { atomicAdd(p + i, v); }
__device__ __forceinline__ void add(__half* p, int64_t i, float v) { atomicAdd(p + i, __float2half(v)); }
__device__ __forceinline__ void add(__nv_bfloat16* p, int64_t i, float v) { atomicAdd(p + i, __float2bfloat16(v)); }

struct Span {
  int64_t begin, end;
};

// Input rows [begin, end) read by output row o, before clipping (cpu/pool.cpp's window()).
__device__ __forceinline__ Span window(bool adaptive, int64_t o, int64_t in, int64_t out, int64_t k, int64_t s,
                                       int64_t p) {
  if (adaptive) return {(o * in) / out, ((o + 1) * in + out - 1) / out};
  const int64_t b = o * s - p;
  return {b, b + k < in + p ? b + k : in + p};
}

#define EMBER_GRID_LOOP(k, total) \
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < (total); k += int64_t{gridDim.x} * blockDim.x)

template <class T>
__global__ void max_pool_kernel(T* out, int64_t* indices, const T* x, cpu::PoolGeom g, int64_t total) {
  using A = typename Acc<T>::type;
  EMBER_GRID_LOOP(k, total) {
    const int64_t p = k / (g.OH * g.OW), oh = (k / g.OW) % g.OH, ow = k % g.OW;
    const T* src = x + p * g.H * g.W;
    A best = -INFINITY;
    int64_t best_i = -1;
    if (g.adaptive) {
      const Span hs = window(true, oh, g.H, g.OH, 0, 0, 0), ws = window(true, ow, g.W, g.OW, 0, 0, 0);
      best_i = hs.begin * g.W + ws.begin;
      for (int64_t h = hs.begin; h < hs.end; ++h) {
        for (int64_t w = ws.begin; w < ws.end; ++w) {
          const A v = load(src, h * g.W + w);
          if (v > best || v != v) best = v, best_i = h * g.W + w;
        }
      }
    } else {
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t h = oh * g.sh - g.ph + i * g.dh;
        if (h < 0 || h >= g.H) continue;
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t w = ow * g.sw - g.pw + j * g.dw;
          if (w < 0 || w >= g.W) continue;
          const A v = load(src, h * g.W + w);
          if (best_i < 0) best_i = h * g.W + w;  // the first tap in bounds, as on the CPU
          if (v > best || v != v) best = v, best_i = h * g.W + w;
        }
      }
      if (best_i < 0) best_i = 0;
    }
    store(out, k, best);
    indices[k] = best_i;
  }
}

template <class T>
__global__ void max_pool_backward_kernel(T* gx, const T* gy, const int64_t* indices, int64_t plane_in,
                                         int64_t plane_out, int64_t total) {
  EMBER_GRID_LOOP(k, total) {
    const int64_t p = k / plane_out;
    add(gx, p * plane_in + indices[k], load(gy, k));
  }
}

// Window of output cell k, clipped, and its divisor (cpu/pool.cpp's for_each_average).
struct Cell {
  int64_t in0, h0, h1, w0, w1, div;
};

__device__ __forceinline__ Cell average_cell(const cpu::PoolGeom& g, int64_t k) {
  const int64_t p = k / (g.OH * g.OW), oh = (k / g.OW) % g.OH, ow = k % g.OW;
  const Span hs = window(g.adaptive, oh, g.H, g.OH, g.kh, g.sh, g.ph);
  const Span ws = window(g.adaptive, ow, g.W, g.OW, g.kw, g.sw, g.pw);
  Cell c;
  c.in0 = p * g.H * g.W;
  c.h0 = hs.begin > 0 ? hs.begin : 0;
  c.h1 = hs.end < g.H ? hs.end : g.H;
  c.w0 = ws.begin > 0 ? ws.begin : 0;
  c.w1 = ws.end < g.W ? ws.end : g.W;
  const int64_t padded = (hs.end - hs.begin) * (ws.end - ws.begin);
  c.div = g.divisor_override ? g.divisor_override
          : (g.count_include_pad && !g.adaptive) ? padded
                                                 : (c.h1 - c.h0) * (c.w1 - c.w0);
  return c;
}

template <class T>
__global__ void avg_pool_kernel(T* out, const T* x, cpu::PoolGeom g, int64_t total) {
  using A = typename Acc<T>::type;
  EMBER_GRID_LOOP(k, total) {
    const Cell c = average_cell(g, k);
    A acc = 0;
    for (int64_t h = c.h0; h < c.h1; ++h)
      for (int64_t w = c.w0; w < c.w1; ++w) acc += load(x, c.in0 + h * g.W + w);
    store(out, k, c.div != 0 ? acc / static_cast<A>(c.div) : A(0));  // a negative divisor_override divides too
  }
}

template <class T>
__global__ void avg_pool_backward_kernel(T* gx, const T* gy, cpu::PoolGeom g, int64_t total) {
  using A = typename Acc<T>::type;
  EMBER_GRID_LOOP(k, total) {
    const Cell c = average_cell(g, k);
    if (c.div == 0) continue;
    const A v = static_cast<A>(load(gy, k)) / static_cast<A>(c.div);
    for (int64_t h = c.h0; h < c.h1; ++h)
      for (int64_t w = c.w0; w < c.w1; ++w) add(gx, c.in0 + h * g.W + w, v);
  }
}

}  // namespace
}  // namespace ember::cuda
