// The kernels of the fused scaled dot product attention (cuda/attention.cu
// launches them; the scheme is described there). Device code only, in a header
// so that tests/cpp/test_flash_emulation.cpp can also compile it for the host
// against stand-ins of the CUDA built-ins and of nvcuda::wmma, and check the
// kernels' indexing, masking and synchronisation on machines without a GPU.
#pragma once
#include <cstdint>

#include <ember/cuda/device/async_copy.cuh>

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <ember/cuda/device/float_access.cuh>

// The block's dynamic shared memory (the host emulation defines its own).
#define EMBER_FLASH_SHARED_MEMORY(name) extern __shared__ __align__(128) unsigned char name[]
#endif

namespace ember::cuda::flash {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kBlockM = 64;  // query rows per tile (16 per warp)
constexpr int kBlockN = 64;  // keys per tile (16 per warp in the backward)
constexpr int kPad = 8;      // extra 16-bit elements per shared row: 16 bytes, spreads banks
constexpr int kPadF = 4;     // extra floats per shared float row
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

static_assert(kBlockM == kWarps * 16 && kBlockN == kWarps * 16, "each warp owns 16 rows of a tile");

template <class T>
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major>;
template <class T>
using FragAT = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major>;
template <class T>
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major>;
template <class T>
using FragBT = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

// Shared memory of the forward kernel, in bytes: Q, K and V tiles
// ([64, D + kPad] each), each warp's P ([16, kBlockN + kPad]) and float scratch
// ([16, max(kBlockN, D) + kPadF]). Every piece is a multiple of 128 bytes, so
// each starts 128-byte aligned (wmma wants 32).
constexpr int forward_smem_bytes(int D, int elem) {
  return (kBlockM + 2 * kBlockN) * (D + kPad) * elem + kWarps * 16 * (kBlockN + kPad) * elem +
         kWarps * 16 * ((D > kBlockN ? D : kBlockN) + kPadF) * 4;
}

// Shared memory of the backward kernel: K, V, Q and dO tiles ([64, D + kPad]
// each), P^T / dS^T ([kBlockN, kBlockM + kPad]), each warp's float scratch
// ([16, kBlockM + kPadF]), and the query tile's lse and delta.
constexpr int backward_smem_bytes(int D, int elem) {
  return 2 * (kBlockM + kBlockN) * (D + kPad) * elem + kBlockN * (kBlockM + kPad) * elem +
         kWarps * 16 * (kBlockM + kPadF) * 4 + 2 * kBlockM * 4;
}

// The backward's A B^T products: the warp's 16 rows of `a` ([16, D], row
// stride ldh) against the kBlockM rows of the tile `b` ([kBlockM, D]), as float
// into the warp's scratch f_w ([16, kBlockM], row stride ldf).
template <class T, int D>
__device__ void warp_rows_times_tile_t(const T* a, const T* b, int ldh, float* f_w, int ldf) {
#pragma unroll
  for (int nb = 0; nb < kBlockM / 16; ++nb) {
    FragC acc;
    wmma::fill_fragment(acc, 0.f);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      FragA<T> fa;
      FragBT<T> fb;  // b^T: element (e, j) is b[j][e]
      wmma::load_matrix_sync(fa, a + kk * 16, ldh);
      wmma::load_matrix_sync(fb, b + nb * 16 * ldh + kk * 16, ldh);
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(f_w + nb * 16, acc, ldf, wmma::mem_row_major);
  }
}

// The backward's accumulations acc[cb] += A tile[:, 16 cb .. 16 cb + 16]: A is
// the warp's [16, kBlockM] slice of P^T or dS^T at `a` (row stride lda), loaded
// once for all column blocks; tile is a [kBlockM, D] tile (row stride ldh).
template <class T, int D>
__device__ void warp_accumulate_times_tile(const T* a, int lda, const T* tile, int ldh, FragC* acc) {
  FragA<T> fa[kBlockM / 16];
#pragma unroll
  for (int kk = 0; kk < kBlockM / 16; ++kk) wmma::load_matrix_sync(fa[kk], a + kk * 16, lda);
#pragma unroll
  for (int cb = 0; cb < D / 16; ++cb) {
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) {
      FragB<T> b;
      wmma::load_matrix_sync(b, tile + kk * 16 * ldh + cb * 16, ldh);
      wmma::mma_sync(acc[cb], fa[kk], b, acc[cb]);
    }
  }
}

// Where an input's rows are, in elements: row i of slice n (the n-th of the
// N = batch * heads [rows, E] matrices) starts at (n / heads) * batch +
// (n % heads) * head + i * row; the last dim is contiguous. This covers
// contiguous [N, rows, E] tensors and views such as GPT-2's q, k and v cut from
// one [B, T, 3C] projection and transposed to [B, H, T, D]: strides
// (T * 3C, D, 3C, 1), read in place instead of copied. The host guarantees
// 16-byte aligned rows (base and every stride * element size multiples of 16);
// other layouts are copied first (core/ops/attention.cpp's flash_operands says
// why rather than a scalar-load path here).
struct RowStrides {
  int64_t batch, head, row;
};

__device__ inline int64_t slice_offset(const RowStrides& s, int64_t n, int64_t heads) {
  return (n / heads) * s.batch + (n % heads) * s.head;
}

// Rows [row0, row0 + 64) of a [rows, E] matrix with row stride ld into a
// [64, D + kPad] shared tile, 16 bytes (8 elements) per access; rows past
// `rows` and columns past E are zeros. E is a multiple of 8 and every row start
// src + i * ld 16-byte aligned (checked by the host).
template <int D, class T>
__device__ void load_tile(T* dst, const T* src, int64_t ld, int64_t row0, int64_t rows, int E) {
  constexpr int kChunks = D / 8;
  for (int idx = threadIdx.x; idx < 64 * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = (idx % kChunks) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row0 + r < rows && c < E) v = *reinterpret_cast<const uint4*>(src + (row0 + r) * ld + c);
    *reinterpret_cast<uint4*>(dst + r * (D + kPad) + c) = v;
  }
}

// load_tile through cp.async: the copies run in the background until the
// thread's async::wait for their group (then a __syncthreads publishes them).
template <int D, class T>
__device__ void load_tile_async(T* dst, const T* src, int64_t ld, int64_t row0, int64_t rows, int E) {
  constexpr int kChunks = D / 8;
  for (int idx = threadIdx.x; idx < 64 * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = (idx % kChunks) * 8;
    const bool in = row0 + r < rows && c < E;
    async::copy16(dst + r * (D + kPad) + c, in ? src + (row0 + r) * ld + c : src, in);
  }
}

// ---- forward

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_forward_kernel(T* out, RowStrides os, float* lse, const T* q, RowStrides qs, const T* k, RowStrides ks, const T* v,
                         RowStrides vs, int64_t heads, int64_t L, int64_t S, int E, float scale_log2, bool causal,
                         int64_t q_tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int ldh = D + kPad;                                  // Q, K, V tiles
  constexpr int ldp = kBlockN + kPad;                            // P
  constexpr int ldf = (D > kBlockN ? D : kBlockN) + kPadF;       // float scratch
  constexpr int kCols = kBlockN / 2;                             // score columns per lane
  constexpr int kOut = D / 2;                                    // output columns per lane
  EMBER_FLASH_SHARED_MEMORY(smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* q_s = reinterpret_cast<T*>(smem);
  T* k_s = q_s + kBlockM * ldh;
  T* v_s = k_s + kBlockN * ldh;
  T* p_w = v_s + kBlockN * ldh + warp * 16 * ldp;
  float* f_w = reinterpret_cast<float*>(v_s + kBlockN * ldh + kWarps * 16 * ldp) + warp * 16 * ldf;

  const int64_t n = blockIdx.x / q_tiles;
  const int64_t q0 = (q_tiles - 1 - blockIdx.x % q_tiles) * kBlockM;  // the longest causal tiles start first
  const T* qn = q + slice_offset(qs, n, heads);
  const T* kn = k + slice_offset(ks, n, heads);
  const T* vn = v + slice_offset(vs, n, heads);

  const int r = lane / 2, half = lane % 2;       // this lane's row of the warp's 16, and half of the columns
  const int64_t row = q0 + warp * 16 + r;        // its query index
  float m = -INFINITY, l = 0.f;                  // running max (log2 units) and sum of the row
  float o[kOut];
#pragma unroll
  for (int i = 0; i < kOut; ++i) o[i] = 0.f;

  load_tile<D>(q_s, qn, qs.row, q0, L, E);
  __syncthreads();
  FragA<T> qa[D / 16];  // the warp's 16 query rows, reused against every key tile
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) wmma::load_matrix_sync(qa[kk], q_s + warp * 16 * ldh + kk * 16, ldh);
  // Causal: keys after the tile's last query row are masked for every row.
  const int64_t kv_end = causal && q0 + kBlockM < S ? q0 + kBlockM : S;
  for (int64_t kv0 = 0; kv0 < kv_end; kv0 += kBlockN) {
    __syncthreads();  // every warp is done with the previous K / V tile
    load_tile<D>(k_s, kn, ks.row, kv0, S, E);
    load_tile<D>(v_s, vn, vs.row, kv0, S, E);
    __syncthreads();

    // Scores of the warp's 16 rows against the 64 keys.
#pragma unroll
    for (int nb = 0; nb < kBlockN / 16; ++nb) {
      FragC acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        FragBT<T> b;  // K^T: element (e, j) is K[j][e]
        wmma::load_matrix_sync(b, k_s + nb * 16 * ldh + kk * 16, ldh);
        wmma::mma_sync(acc, qa[kk], b, acc);
      }
      wmma::store_matrix_sync(f_w + nb * 16, acc, ldf, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax of the lane's half row.
    float s[kCols];
    float tile_max = -INFINITY;
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int col = half * kCols + c;
      const int64_t key = kv0 + col;
      float x = f_w[r * ldf + col] * scale_log2;
      if (key >= S || (causal && key > row)) x = -INFINITY;
      s[c] = x;
      tile_max = fmaxf(tile_max, x);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float m_new = fmaxf(m, tile_max);
    const float m_ref = m_new == -INFINITY ? 0.f : m_new;  // no key seen yet: p = 0, not NaN
    const float alpha = exp2f(m - m_ref);                   // rescales what was summed so far
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const float p = exp2f(s[c] - m_ref);
      sum += p;
      store(p_w, r * ldp + half * kCols + c, p);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    l = l * alpha + sum;
    m = m_new;
#pragma unroll
    for (int i = 0; i < kOut; ++i) o[i] *= alpha;
    __syncwarp();

    // P V for the warp's rows, through the scratch into the lanes' registers.
    FragA<T> pa[kBlockN / 16];
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) wmma::load_matrix_sync(pa[kk], p_w + kk * 16, ldp);
#pragma unroll
    for (int cb = 0; cb < D / 16; ++cb) {
      FragC acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        FragB<T> b;
        wmma::load_matrix_sync(b, v_s + kk * 16 * ldh + cb * 16, ldh);
        wmma::mma_sync(acc, pa[kk], b, acc);
      }
      wmma::store_matrix_sync(f_w + cb * 16, acc, ldf, wmma::mem_row_major);
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < kOut; ++i) o[i] += f_w[r * ldf + half * kOut + i];
    __syncwarp();  // the scratch takes the next tile's scores
  }

  if (row < L) {
    const float inv = l > 0.f ? 1.f / l : 0.f;
    T* orow = out + slice_offset(os, n, heads) + row * os.row;
#pragma unroll
    for (int i = 0; i < kOut; ++i) {
      const int col = half * kOut + i;
      if (col < E) store(orow, col, o[i] * inv);
    }
    if (half == 0) lse[n * L + row] = l > 0.f ? (m + log2f(l)) * kLn2 : -INFINITY;
  }
#endif
}

// ---- backward

// delta[n * L + i] = sum over E of gout * out in row i of slice n, one warp
// per row (rows = N * L).
template <class T>
__global__ void flash_delta_kernel(float* delta, const T* gout, RowStrides gs, const T* out, RowStrides os,
                                   int64_t heads, int64_t L, int64_t rows, int E) {
  const int64_t row = blockIdx.x * int64_t{blockDim.x / 32} + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const int64_t n = row / L, i = row % L;
  const T* g = gout + slice_offset(gs, n, heads) + i * gs.row;
  const T* o = out + slice_offset(os, n, heads) + i * os.row;
  float s = 0.f;
  for (int c = lane; c < E; c += 32) s += load(g, c) * load(o, c);
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) delta[row] = s;
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_backward_kernel(float* gq_acc, T* gk, RowStrides gks, T* gv, RowStrides gvs, const T* q,
                          RowStrides qs, const T* k, RowStrides ks, const T* v, RowStrides vs, const T* gout,
                          RowStrides gs, const float* lse, const float* delta, int64_t heads, int64_t L, int64_t S, int E, float scale,
                          float scale_log2, bool causal, int64_t kv_tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int ldh = D + kPad;        // K, V, Q, dO tiles
  constexpr int ldp = kBlockM + kPad;  // P^T, then dS^T: [keys, queries]
  constexpr int ldf = kBlockM + kPadF;
  constexpr int kCols = kBlockM / 2;   // query columns per lane
  EMBER_FLASH_SHARED_MEMORY(smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* k_s = reinterpret_cast<T*>(smem);
  T* v_s = k_s + kBlockN * ldh;
  T* q_s = v_s + kBlockN * ldh;
  T* do_s = q_s + kBlockM * ldh;
  T* pt_s = do_s + kBlockM * ldh;
  T* pt_w = pt_s + warp * 16 * ldp;  // this warp's 16 keys
  float* f_s = reinterpret_cast<float*>(pt_s + kBlockN * ldp);
  float* f_w = f_s + warp * 16 * ldf;
  float* lse_s = f_s + kWarps * 16 * ldf;  // log2 units
  float* delta_s = lse_s + kBlockM;

  const int64_t n = blockIdx.x / kv_tiles;
  const int64_t kv0 = (blockIdx.x % kv_tiles) * kBlockN;  // causal: low key tiles see the most queries
  const T* qn = q + slice_offset(qs, n, heads);
  const T* kn = k + slice_offset(ks, n, heads);
  const T* vn = v + slice_offset(vs, n, heads);
  const T* don = gout + slice_offset(gs, n, heads);

  const int r = lane / 2, half = lane % 2;
  const int64_t key = kv0 + warp * 16 + r;  // this lane's key

  FragC dk[D / 16], dv[D / 16];
#pragma unroll
  for (int i = 0; i < D / 16; ++i) {
    wmma::fill_fragment(dk[i], 0.f);
    wmma::fill_fragment(dv[i], 0.f);
  }
  load_tile<D>(k_s, kn, ks.row, kv0, S, E);
  load_tile<D>(v_s, vn, vs.row, kv0, S, E);

  // Causal: queries before the tile's first key attend none of its keys.
  const int64_t q_begin = causal ? (kv0 / kBlockM) * kBlockM : 0;
  for (int64_t q0 = q_begin; q0 < L; q0 += kBlockM) {
    __syncthreads();  // the previous query tile (and its dS^T) is no longer read
    load_tile<D>(q_s, qn, qs.row, q0, L, E);
    load_tile<D>(do_s, don, gs.row, q0, L, E);
    for (int i = threadIdx.x; i < kBlockM; i += kThreads) {
      const bool in = q0 + i < L;
      lse_s[i] = in ? lse[n * L + q0 + i] * kLog2e : 0.f;
      delta_s[i] = in ? delta[n * L + q0 + i] : 0.f;
    }
    __syncthreads();

    // S^T for the warp's 16 keys against the 64 queries.
    warp_rows_times_tile_t<T, D>(k_s + warp * 16 * ldh, q_s, ldh, f_w, ldf);  // S^T = K Q^T
    __syncwarp();
    float p[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int col = half * kCols + c;
      const int64_t qi = q0 + col;
      const bool valid = key < S && qi < L && !(causal && key > qi);
      p[c] = valid ? exp2f(f_w[r * ldf + col] * scale_log2 - lse_s[col]) : 0.f;
      store(pt_w, r * ldp + col, p[c]);
    }
    __syncwarp();

    // dV += P^T dO
    warp_accumulate_times_tile<T, D>(pt_w, ldp, do_s, ldh, dv);
    // dP^T = V dO^T for the warp's keys.
    warp_rows_times_tile_t<T, D>(v_s + warp * 16 * ldh, do_s, ldh, f_w, ldf);
    __syncwarp();  // every lane is done reading P^T (dV) before dS^T replaces it
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int col = half * kCols + c;
      store(pt_w, r * ldp + col, p[c] * (f_w[r * ldf + col] - delta_s[col]));
    }
    __syncwarp();

    // dK += dS^T Q (scaled at the end)
    warp_accumulate_times_tile<T, D>(pt_w, ldp, q_s, ldh, dk);
    __syncthreads();  // dS^T of all 64 keys is written

    // dQ for the warp's 16 query rows of this tile: scale * dS K, with
    // dS = (dS^T)^T read column-major from the shared dS^T.
#pragma unroll
    for (int cb = 0; cb < D / 16; ++cb) {
      FragC acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        FragAT<T> a;
        FragB<T> b;
        wmma::load_matrix_sync(a, pt_s + kk * 16 * ldp + warp * 16, ldp);
        wmma::load_matrix_sync(b, k_s + kk * 16 * ldh + cb * 16, ldh);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(f_w, acc, ldf, wmma::mem_row_major);
      __syncwarp();
      const int64_t qi = q0 + warp * 16 + r;
      const int col0 = cb * 16 + half * 8;  // the lane's 8 columns: all below E or none (E % 8 == 0)
      if (qi < L && col0 < E) {
        float* dst = gq_acc + (n * L + qi) * E + col0;  // 32-byte aligned
        const float* src = f_w + r * ldf + half * 8;
#if __CUDA_ARCH__ >= 900  // vector atomics: a quarter of the operations
        atomicAdd(reinterpret_cast<float4*>(dst),
                  make_float4(scale * src[0], scale * src[1], scale * src[2], scale * src[3]));
        atomicAdd(reinterpret_cast<float4*>(dst + 4),
                  make_float4(scale * src[4], scale * src[5], scale * src[6], scale * src[7]));
#else
#pragma unroll
        for (int t = 0; t < 8; ++t) atomicAdd(dst + t, scale * src[t]);
#endif
      }
      __syncwarp();
    }
  }

  // dK (times scale) and dV of the warp's keys, through the scratch.
  const int64_t key_row = key < S ? key : 0;  // rows past S are not written
  T* gk_row = gk + slice_offset(gks, n, heads) + key_row * gks.row;
  T* gv_row = gv + slice_offset(gvs, n, heads) + key_row * gvs.row;
#pragma unroll
  for (int cb = 0; cb < D / 16; ++cb) {
#pragma unroll
    for (int which = 0; which < 2; ++which) {
      wmma::store_matrix_sync(f_w, which == 0 ? dk[cb] : dv[cb], ldf, wmma::mem_row_major);
      __syncwarp();
      T* dst = which == 0 ? gk_row : gv_row;
      const float mult = which == 0 ? scale : 1.f;
#pragma unroll
      for (int t = 0; t < 8; ++t) {
        const int col = cb * 16 + half * 8 + t;
        if (key < S && col < E) store(dst, col, mult * f_w[r * ldf + half * 8 + t]);
      }
      __syncwarp();
    }
  }
#endif
}

}  // namespace ember::cuda::flash
