// Fused scaled dot product attention (FlashAttention-2's scheme) on tensor
// cores through nvcuda::wmma (16x16x16 fragments, float16/bfloat16 inputs,
// float32 accumulators; sm_80+).
//
// Forward: one block of 4 warps per (n, tile of 64 query rows); each warp owns
// 16 query rows. Tiles of 64 keys and values are staged in shared memory; per
// tile a warp computes its scores S = Q K^T, updates the running row max and
// sum (float32, base-2 exponentials) and adds P V into its output rows, which
// its lanes keep in registers (lanes 2r and 2r+1 own row r, half the columns
// each: wmma's fragment layout is opaque, so rescaling happens outside
// fragments, through a per-warp float scratch). The output is written once,
// with the row's logsumexp for the backward. Causal tiles entirely above the
// diagonal are never visited.
//
// Backward: a pass computes delta = rowsum(dO * O); then one block per
// (n, tile of 64 keys), each warp owning 16 keys, walks the query tiles:
// recomputes S^T = K Q^T and P^T = exp(S^T * scale - lse), adds P^T dO into dV
// and dS^T Q into dK (fragments, in registers), where dS = P * (dO V^T - delta),
// and adds scale * dS K into a float32 dQ buffer with atomics.
//
// The head dimension E is padded with zeros to D = 32, 64 or 128 in shared
// memory (zero columns add nothing to Q K^T; padded output columns are not
// written); rows past L or S are zero-filled and masked out of P.
#include <ember/cuda/attention.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <climits>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/float_access.cuh>
#include <ember/cuda/error.h>

namespace ember::cuda {

namespace {

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

// Rows [row0, row0 + 64) of a [rows, E] matrix into a [64, D + kPad] shared
// tile, 16 bytes (8 elements) per access; rows past `rows` and columns past E
// are zeros. E is a multiple of 8 and src 16-byte aligned (checked by the host).
template <int D, class T>
__device__ void load_tile(T* dst, const T* src, int64_t row0, int64_t rows, int E) {
  constexpr int kChunks = D / 8;
  for (int idx = threadIdx.x; idx < 64 * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = (idx % kChunks) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row0 + r < rows && c < E) v = *reinterpret_cast<const uint4*>(src + (row0 + r) * E + c);
    *reinterpret_cast<uint4*>(dst + r * (D + kPad) + c) = v;
  }
}

// ---- forward

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_forward_kernel(T* out, float* lse, const T* q, const T* k, const T* v, int64_t L, int64_t S, int E,
                         float scale_log2, bool causal, int64_t q_tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int ldh = D + kPad;                                  // Q, K, V tiles
  constexpr int ldp = kBlockN + kPad;                            // P
  constexpr int ldf = (D > kBlockN ? D : kBlockN) + kPadF;       // float scratch
  constexpr int kCols = kBlockN / 2;                             // score columns per lane
  constexpr int kOut = D / 2;                                    // output columns per lane
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T* q_s = reinterpret_cast<T*>(smem);
  T* k_s = q_s + kBlockM * ldh;
  T* v_s = k_s + kBlockN * ldh;
  T* p_w = v_s + kBlockN * ldh + warp * 16 * ldp;
  float* f_w = reinterpret_cast<float*>(v_s + kBlockN * ldh + kWarps * 16 * ldp) + warp * 16 * ldf;

  const int64_t n = blockIdx.x / q_tiles;
  const int64_t q0 = (q_tiles - 1 - blockIdx.x % q_tiles) * kBlockM;  // the longest causal tiles start first
  const T* qn = q + n * L * E;
  const T* kn = k + n * S * E;
  const T* vn = v + n * S * E;

  const int r = lane / 2, half = lane % 2;       // this lane's row of the warp's 16, and half of the columns
  const int64_t row = q0 + warp * 16 + r;        // its query index
  float m = -INFINITY, l = 0.f;                  // running max (log2 units) and sum of the row
  float o[kOut];
#pragma unroll
  for (int i = 0; i < kOut; ++i) o[i] = 0.f;

  load_tile<D>(q_s, qn, q0, L, E);
  // Causal: keys after the tile's last query row are masked for every row.
  const int64_t kv_end = causal && q0 + kBlockM < S ? q0 + kBlockM : S;
  for (int64_t kv0 = 0; kv0 < kv_end; kv0 += kBlockN) {
    __syncthreads();  // every warp is done with the previous K / V tile
    load_tile<D>(k_s, kn, kv0, S, E);
    load_tile<D>(v_s, vn, kv0, S, E);
    __syncthreads();

    // Scores of the warp's 16 rows against the 64 keys.
#pragma unroll
    for (int nb = 0; nb < kBlockN / 16; ++nb) {
      FragC acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        FragA<T> a;
        FragBT<T> b;  // K^T: element (e, j) is K[j][e]
        wmma::load_matrix_sync(a, q_s + warp * 16 * ldh + kk * 16, ldh);
        wmma::load_matrix_sync(b, k_s + nb * 16 * ldh + kk * 16, ldh);
        wmma::mma_sync(acc, a, b, acc);
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
#pragma unroll
    for (int cb = 0; cb < D / 16; ++cb) {
      FragC acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        FragA<T> a;
        FragB<T> b;
        wmma::load_matrix_sync(a, p_w + kk * 16, ldp);
        wmma::load_matrix_sync(b, v_s + kk * 16 * ldh + cb * 16, ldh);
        wmma::mma_sync(acc, a, b, acc);
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
    T* orow = out + (n * L + row) * E;
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

// delta[row] = sum over E of gout * out, one warp per row.
template <class T>
__global__ void flash_delta_kernel(float* delta, const T* gout, const T* out, int64_t rows, int E) {
  const int64_t row = blockIdx.x * int64_t{blockDim.x / 32} + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  float s = 0.f;
  for (int c = lane; c < E; c += 32) s += load(gout, row * E + c) * load(out, row * E + c);
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (lane == 0) delta[row] = s;
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_backward_kernel(float* gq_acc, T* gk, T* gv, const T* q, const T* k, const T* v, const T* gout,
                          const float* lse, const float* delta, int64_t L, int64_t S, int E, float scale,
                          float scale_log2, bool causal, int64_t kv_tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int ldh = D + kPad;        // K, V, Q, dO tiles
  constexpr int ldp = kBlockM + kPad;  // P^T, then dS^T: [keys, queries]
  constexpr int ldf = kBlockM + kPadF;
  constexpr int kCols = kBlockM / 2;   // query columns per lane
  extern __shared__ __align__(128) unsigned char smem[];
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
  const T* qn = q + n * L * E;
  const T* kn = k + n * S * E;
  const T* vn = v + n * S * E;
  const T* don = gout + n * L * E;

  const int r = lane / 2, half = lane % 2;
  const int64_t key = kv0 + warp * 16 + r;  // this lane's key

  FragC dk[D / 16], dv[D / 16];
#pragma unroll
  for (int i = 0; i < D / 16; ++i) {
    wmma::fill_fragment(dk[i], 0.f);
    wmma::fill_fragment(dv[i], 0.f);
  }
  load_tile<D>(k_s, kn, kv0, S, E);
  load_tile<D>(v_s, vn, kv0, S, E);

  // Causal: queries before the tile's first key attend none of its keys.
  const int64_t q_begin = causal ? (kv0 / kBlockM) * kBlockM : 0;
  for (int64_t q0 = q_begin; q0 < L; q0 += kBlockM) {
    __syncthreads();  // the previous query tile (and its dS^T) is no longer read
    load_tile<D>(q_s, qn, q0, L, E);
    load_tile<D>(do_s, don, q0, L, E);
    for (int i = threadIdx.x; i < kBlockM; i += kThreads) {
      const bool in = q0 + i < L;
      lse_s[i] = in ? lse[n * L + q0 + i] * kLog2e : 0.f;
      delta_s[i] = in ? delta[n * L + q0 + i] : 0.f;
    }
    __syncthreads();

    // S^T for the warp's 16 keys against the 64 queries.
#pragma unroll
    for (int nb = 0; nb < kBlockM / 16; ++nb) {
      FragC acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        FragA<T> a;
        FragBT<T> b;  // Q^T
        wmma::load_matrix_sync(a, k_s + warp * 16 * ldh + kk * 16, ldh);
        wmma::load_matrix_sync(b, q_s + nb * 16 * ldh + kk * 16, ldh);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(f_w + nb * 16, acc, ldf, wmma::mem_row_major);
    }
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
#pragma unroll
    for (int cb = 0; cb < D / 16; ++cb) {
#pragma unroll
      for (int kk = 0; kk < kBlockM / 16; ++kk) {
        FragA<T> a;
        FragB<T> b;
        wmma::load_matrix_sync(a, pt_w + kk * 16, ldp);
        wmma::load_matrix_sync(b, do_s + kk * 16 * ldh + cb * 16, ldh);
        wmma::mma_sync(dv[cb], a, b, dv[cb]);
      }
    }
    // dP^T = V dO^T for the warp's keys.
#pragma unroll
    for (int nb = 0; nb < kBlockM / 16; ++nb) {
      FragC acc;
      wmma::fill_fragment(acc, 0.f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        FragA<T> a;
        FragBT<T> b;  // dO^T
        wmma::load_matrix_sync(a, v_s + warp * 16 * ldh + kk * 16, ldh);
        wmma::load_matrix_sync(b, do_s + nb * 16 * ldh + kk * 16, ldh);
        wmma::mma_sync(acc, a, b, acc);
      }
      wmma::store_matrix_sync(f_w + nb * 16, acc, ldf, wmma::mem_row_major);
    }
    __syncwarp();  // every lane is done reading P^T (dV) before dS^T replaces it
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const int col = half * kCols + c;
      store(pt_w, r * ldp + col, p[c] * (f_w[r * ldf + col] - delta_s[col]));
    }
    __syncwarp();

    // dK += dS^T Q (scaled at the end)
#pragma unroll
    for (int cb = 0; cb < D / 16; ++cb) {
#pragma unroll
      for (int kk = 0; kk < kBlockM / 16; ++kk) {
        FragA<T> a;
        FragB<T> b;
        wmma::load_matrix_sync(a, pt_w + kk * 16, ldp);
        wmma::load_matrix_sync(b, q_s + kk * 16 * ldh + cb * 16, ldh);
        wmma::mma_sync(dk[cb], a, b, dk[cb]);
      }
    }
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
#pragma unroll
      for (int t = 0; t < 8; ++t) {
        const int col = cb * 16 + half * 8 + t;
        if (qi < L && col < E) atomicAdd(gq_acc + (n * L + qi) * E + col, scale * f_w[r * ldf + half * 8 + t]);
      }
      __syncwarp();
    }
  }

  // dK (times scale) and dV of the warp's keys, through the scratch.
#pragma unroll
  for (int cb = 0; cb < D / 16; ++cb) {
#pragma unroll
    for (int which = 0; which < 2; ++which) {
      wmma::store_matrix_sync(f_w, which == 0 ? dk[cb] : dv[cb], ldf, wmma::mem_row_major);
      __syncwarp();
      T* dst = which == 0 ? gk : gv;
      const float mult = which == 0 ? scale : 1.f;
#pragma unroll
      for (int t = 0; t < 8; ++t) {
        const int col = cb * 16 + half * 8 + t;
        if (key < S && col < E) store(dst, (n * S + key) * E + col, mult * f_w[r * ldf + half * 8 + t]);
      }
      __syncwarp();
    }
  }
#endif
}

// ---- launchers

int padded_head_dim(int64_t E) { return E <= 32 ? 32 : E <= 64 ? 64 : 128; }

void check_operand(const Tensor& t, const char* what) {
  EMBER_CHECK(t.is_contiguous() && reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0, Error,
              "scaled_dot_product_attention: the fused kernel needs ", what,
              " contiguous and 16-byte aligned (internal error)");
}

int64_t grid_size(int64_t n, int64_t tiles) {
  EMBER_CHECK(tiles > 0 && n <= INT_MAX / tiles, Error, "scaled_dot_product_attention: ", n, " heads x ", tiles,
              " tiles exceed the CUDA grid limit");
  return n * tiles;
}

template <class T, int D>
void launch_forward(Tensor& out, Tensor& lse, const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                    bool causal, cudaStream_t stream) {
  const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
  const int E = static_cast<int>(q.size(2));
  const int64_t tiles = (L + kBlockM - 1) / kBlockM;
  const int smem = forward_smem_bytes(D, sizeof(T));
  EMBER_CUDA_CHECK(
      cudaFuncSetAttribute(flash_forward_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  flash_forward_kernel<T, D><<<static_cast<unsigned>(grid_size(N, tiles)), kThreads, smem, stream>>>(
      static_cast<T*>(out.data_ptr()), static_cast<float*>(lse.data_ptr()), static_cast<const T*>(q.data_ptr()),
      static_cast<const T*>(k.data_ptr()), static_cast<const T*>(v.data_ptr()), L, S, E,
      static_cast<float>(scale) * kLog2e, causal, tiles);
  EMBER_CUDA_KERNEL_CHECK();
}

template <class T, int D>
void launch_backward(Tensor& gq_acc, Tensor& gk, Tensor& gv, Tensor& delta, const Tensor& gout, const Tensor& q,
                     const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse, double scale,
                     bool causal, cudaStream_t stream) {
  const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
  const int E = static_cast<int>(q.size(2));
  const int64_t rows = N * L;
  constexpr int kRowsPerBlock = 8;  // warps of the delta kernel
  EMBER_CHECK((rows + kRowsPerBlock - 1) / kRowsPerBlock <= INT_MAX, Error,
              "scaled_dot_product_attention: too many rows for the CUDA grid");
  flash_delta_kernel<T><<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kRowsPerBlock * 32, 0,
                          stream>>>(static_cast<float*>(delta.data_ptr()), static_cast<const T*>(gout.data_ptr()),
                                    static_cast<const T*>(out.data_ptr()), rows, E);
  EMBER_CUDA_KERNEL_CHECK();

  const int64_t tiles = (S + kBlockN - 1) / kBlockN;
  const int smem = backward_smem_bytes(D, sizeof(T));
  EMBER_CUDA_CHECK(
      cudaFuncSetAttribute(flash_backward_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  flash_backward_kernel<T, D><<<static_cast<unsigned>(grid_size(N, tiles)), kThreads, smem, stream>>>(
      static_cast<float*>(gq_acc.data_ptr()), static_cast<T*>(gk.data_ptr()), static_cast<T*>(gv.data_ptr()),
      static_cast<const T*>(q.data_ptr()), static_cast<const T*>(k.data_ptr()), static_cast<const T*>(v.data_ptr()),
      static_cast<const T*>(gout.data_ptr()), static_cast<const float*>(lse.data_ptr()),
      static_cast<const float*>(delta.data_ptr()), L, S, E, static_cast<float>(scale),
      static_cast<float>(scale) * kLog2e, causal, tiles);
  EMBER_CUDA_KERNEL_CHECK();
}

// Calls f(T, D) with the device element type and padded head dimension.
template <class F>
void dispatch(DType dtype, int64_t E, F&& f) {
  EMBER_CHECK(E > 0 && E % 8 == 0 && E <= 128, Error, "scaled_dot_product_attention: the fused kernel takes head "
              "sizes that are multiples of 8 up to 128, got ", E);
  const int D = padded_head_dim(E);
  auto with_type = [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (D == 32) f(TypeTag<T>{}, std::integral_constant<int, 32>{});
    else if (D == 64) f(TypeTag<T>{}, std::integral_constant<int, 64>{});
    else f(TypeTag<T>{}, std::integral_constant<int, 128>{});
  };
  if (dtype == DType::Float16) with_type(TypeTag<__half>{});
  else if (dtype == DType::BFloat16) with_type(TypeTag<__nv_bfloat16>{});
  else throw Error(str("scaled_dot_product_attention: the fused kernel takes float16 or bfloat16, got ",
                       dtype_name(dtype)));
}

}  // namespace

bool flash_attention_supported(int index, int64_t head_dim) {
  if (head_dim <= 0 || head_dim % 8 != 0 || head_dim > 128) return false;
  const DeviceContext& ctx = Registry::get().device(index);
  if (ctx.props.major < 8) return false;
  const int D = padded_head_dim(head_dim);
  const size_t need = static_cast<size_t>(
      forward_smem_bytes(D, 2) > backward_smem_bytes(D, 2) ? forward_smem_bytes(D, 2) : backward_smem_bytes(D, 2));
  return ctx.props.sharedMemPerBlockOptin >= need;
}

void flash_attention_forward(Tensor& out, Tensor& lse, const Tensor& q, const Tensor& k, const Tensor& v,
                             double scale, bool causal) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&out, &q, &k, &v}) check_operand(*t, "q, k, v and out");
  const int index = q.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  dispatch(q.dtype(), q.size(2), [&](auto tag, auto d) {
    launch_forward<typename decltype(tag)::type, decltype(d)::value>(out, lse, q, k, v, scale, causal, stream);
  });
}

void flash_attention_backward(Tensor& gq_acc, Tensor& gk, Tensor& gv, Tensor& delta, const Tensor& gout,
                              const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                              const Tensor& lse, double scale, bool causal) {
  for (const Tensor* t : std::initializer_list<const Tensor*>{&gk, &gv, &gout, &q, &k, &v, &out}) check_operand(*t, "q, k, v, out and gradients");
  const int index = q.device().index;
  DeviceGuard guard(index);
  const cudaStream_t stream = current_cuda_stream(index);
  dispatch(q.dtype(), q.size(2), [&](auto tag, auto d) {
    launch_backward<typename decltype(tag)::type, decltype(d)::value>(gq_acc, gk, gv, delta, gout, q, k, v, out,
                                                                     lse, scale, causal, stream);
  });
}

}  // namespace ember::cuda
