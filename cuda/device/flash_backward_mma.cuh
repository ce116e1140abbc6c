// The fused attention backward with its tiles in registers (FlashAttention-2's
// backward on mma.sync fragments, cuda/device/mma.cuh), for head sizes padded
// to 32 or 64: at 128 its accumulators would not fit the registers, and
// flash_backward_kernel (flash_attention.cuh, wmma) runs instead. Same grid,
// inputs and outputs as that kernel: one block per (n, tile of 64 keys), each
// warp owning 16 keys, walking the query tiles.
//
// Per warp and query tile, in registers: S^T = K Q^T (the warp's keys against
// 64 queries), P^T = exp2(S^T scale - lse), dV += P^T dO with P^T straight
// from the accumulators, dP^T = V dO^T, dS^T = P^T (dP^T - delta), dK += dS^T Q.
// dQ needs dS for all 64 keys of the block: the warps write dS^T to shared
// memory, and each then computes its 16 query rows' scale * dS K (A fragments
// read transposed by ldmatrix) and adds them into the float32 dQ buffer. The
// next query tile's Q and dO load (cp.async) while this one is computed.
#pragma once
#include <ember/cuda/device/flash_attention.cuh>
#include <ember/cuda/device/mma.cuh>
#include <ember/cuda/device/warp_gemm.cuh>

namespace ember::cuda::flash {

// K and V tiles, two buffers each of the Q and dO tiles (the next query
// tile loads while this one is used), dS^T ([kBlockN, kBlockM + kPad]), and
// two buffers of the query tile's lse and delta.
constexpr int backward_mma_smem_bytes(int D, int elem) {
  return (2 * kBlockN + 4 * kBlockM) * (D + kPad) * elem + kBlockN * (kBlockM + kPad) * elem + 4 * kBlockM * 4;
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_backward_mma_kernel(float* gq_acc, T* gk, RowStrides gks, T* gv, RowStrides gvs, const T* q, RowStrides qs,
                              const T* k, RowStrides ks, const T* v, RowStrides vs, const T* gout, RowStrides gs,
                              const float* lse, const float* delta, int64_t heads, int64_t L, int64_t S, int E,
                              float scale, float scale_log2, bool causal, int64_t kv_tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  static_assert(D <= 64, "head sizes above 64 take flash_backward_kernel");
  constexpr int ldh = D + kPad;        // K, V, Q, dO tiles
  constexpr int ldp = kBlockM + kPad;  // dS^T: [keys, queries]
  EMBER_FLASH_SHARED_MEMORY(smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  T* k_s = reinterpret_cast<T*>(smem);
  T* v_s = k_s + kBlockN * ldh;
  T* ds_s = v_s + (kBlockN + 4 * kBlockM) * ldh;
  float* stats = reinterpret_cast<float*>(ds_s + kBlockN * ldp);
  // Buffer b (0 or 1) of Q, dO, lse (log2 units) and delta. Offsets, not
  // arrays of pointers: an array indexed at run time would live in local memory.
  auto q_buf = [&](int64_t b) { return v_s + (kBlockN + b * kBlockM) * ldh; };
  auto do_buf = [&](int64_t b) { return v_s + (kBlockN + (2 + b) * kBlockM) * ldh; };
  auto lse_buf = [&](int64_t b) { return stats + b * kBlockM; };
  auto delta_buf = [&](int64_t b) { return stats + (2 + b) * kBlockM; };

  const int64_t n = blockIdx.x / kv_tiles;
  const int64_t kv0 = (blockIdx.x % kv_tiles) * kBlockN;  // causal: low key tiles see the most queries
  const T* qn = q + slice_offset(qs, n, heads);
  const T* don = gout + slice_offset(gs, n, heads);
  const int64_t keys[2] = {kv0 + warp * 16 + g, kv0 + warp * 16 + g + 8};  // the lane's two keys

  // A query tile's Q and dO through async copies into buffer b; its lse and
  // delta with plain loads (published by the same barrier).
  auto load_query_tile = [&](int64_t q0, int64_t b) {
    load_tile_async<D>(q_buf(b), qn, qs.row, q0, L, E);
    load_tile_async<D>(do_buf(b), don, gs.row, q0, L, E);
    for (int i = threadIdx.x; i < kBlockM; i += kThreads) {
      const bool in = q0 + i < L;
      lse_buf(b)[i] = in ? lse[n * L + q0 + i] * kLog2e : 0.f;
      delta_buf(b)[i] = in ? delta[n * L + q0 + i] : 0.f;
    }
  };
  // Causal: queries before the tile's first key attend none of its keys.
  const int64_t q_begin = causal ? (kv0 / kBlockM) * kBlockM : 0;
  load_tile_async<D>(k_s, k + slice_offset(ks, n, heads), ks.row, kv0, S, E);
  load_tile_async<D>(v_s, v + slice_offset(vs, n, heads), vs.row, kv0, S, E);
  if (q_begin < L) load_query_tile(q_begin, 0);
  async::commit();
  uint32_t ka[D / 16][4];  // the warp's 16 keys, for every query tile
  float dk[D / 8][4], dv[D / 8][4];
#pragma unroll
  for (int d = 0; d < D / 8; ++d)
#pragma unroll
    for (int e = 0; e < 4; ++e) dk[d][e] = dv[d][e] = 0.f;

  for (int64_t q0 = q_begin, tile = 0; q0 < L; q0 += kBlockM, ++tile) {
    const T* q_s = q_buf(tile % 2);
    const T* do_s = do_buf(tile % 2);
    const float* lse_s = lse_buf(tile % 2);
    const float* delta_s = delta_buf(tile % 2);
    if (q0 + kBlockM < L) {  // the other buffers were released by the last iteration's dS^T barrier
      load_query_tile(q0 + kBlockM, (tile + 1) % 2);
      async::commit();
      async::wait<1>();  // everything but the copies just started
    } else {
      async::wait<0>();
    }
    __syncthreads();  // this query tile (and, first, K and V) is visible
    if (tile == 0) mma::load_a_rows<T, D>(ka, k_s, ldh, warp * 16, lane);

    // P^T for the warp's keys against the tile's queries (column 8j + 2t + e % 2).
    float p[8][4];
    mma::rows_times_tile_t<T, D>(p, ka, q_s, ldh, lane);
    const bool masked = kv0 + kBlockN > S || q0 + kBlockM > L || (causal && kv0 + kBlockN - 1 > q0);
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = 8 * j + 2 * t + e % 2;
        float x = exp2f(p[j][e] * scale_log2 - lse_s[col]);
        if (masked) {
          const int64_t qi = q0 + col, key = keys[e / 2];
          if (key >= S || qi >= L || (causal && key > qi)) x = 0.f;
        }
        p[j][e] = x;
      }

    mma::acc_times_tile<T, D>(dv, p, do_s, ldh, lane);  // dV += P^T dO
    float dp[8][4];
    {
      uint32_t va[D / 16][4];  // reloaded per tile: kept, it would cost 16 more registers throughout
      mma::load_a_rows<T, D>(va, v_s, ldh, warp * 16, lane);
      mma::rows_times_tile_t<T, D>(dp, va, do_s, ldh, lane);  // dP^T = V dO^T
    }
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) p[j][e] *= dp[j][e] - delta_s[8 * j + 2 * t + e % 2];  // now dS^T
    mma::acc_times_tile<T, D>(dk, p, q_s, ldh, lane);  // dK += dS^T Q (scaled at the end)

#pragma unroll
    for (int j = 0; j < 8; ++j) {
      T* dst = ds_s + (warp * 16 + g) * ldp + 8 * j + 2 * t;
      *reinterpret_cast<uint32_t*>(dst) = mma::pack2<T>(p[j][0], p[j][1]);
      *reinterpret_cast<uint32_t*>(dst + 8 * ldp) = mma::pack2<T>(p[j][2], p[j][3]);
    }
    // dS^T of all 64 keys is written, and every warp is done with this tile's
    // Q, dO, lse and delta: the next iteration may load the tile after next
    // into their buffers (its own first barrier then guards dS^T).
    __syncthreads();

    // dQ of the warp's 16 query rows: dS K over the 64 keys, 16 at a time. dS's
    // A fragments come from dS^T transposed: lanes 8i + j name key row j
    // (+8 for i >= 2) of the chunk at query column 8 (i % 2) of the warp's 16.
    float dq[D / 8][4];
#pragma unroll
    for (int d = 0; d < D / 8; ++d) dq[d][0] = dq[d][1] = dq[d][2] = dq[d][3] = 0.f;
    const T* ds_row = ds_s + (lane % 8 + (lane / 16) * 8) * ldp + warp * 16 + (lane / 8) % 2 * 8;
    const T* k_row = k_s + (lane % 8 + (lane / 8) % 2 * 8) * ldh + (lane / 16) * 8;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      uint32_t a[4];
      mma::ldmatrix_x4_trans(a, ds_row + 16 * c * ldp);
#pragma unroll
      for (int d = 0; d < D / 8; d += 2) {
        uint32_t b[4];
        mma::ldmatrix_x4_trans(b, k_row + 16 * c * ldh + d * 8);
        const uint32_t b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
        mma::mma_16x8x16<T>(dq[d], a, b0);
        mma::mma_16x8x16<T>(dq[d + 1], a, b1);
      }
    }
    // Lanes t and t ^ 1 trade halves so that each adds 4 adjacent columns of
    // one row: even t row g, columns 8d + 2t..+3; odd t row g + 8, 8d + 2t - 2..+1.
    const bool even = t % 2 == 0;
    const int64_t qi = q0 + warp * 16 + g + (even ? 0 : 8);
    const int col0 = 2 * (t & ~1);
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
      const float give0 = even ? dq[d][2] : dq[d][0], give1 = even ? dq[d][3] : dq[d][1];
      const float got0 = __shfl_xor_sync(0xffffffffu, give0, 1), got1 = __shfl_xor_sync(0xffffffffu, give1, 1);
      const int col = 8 * d + col0;  // E % 8 == 0: all four below E or none
      if (qi < L && col < E) {
        float* dst = gq_acc + (n * L + qi) * E + col;  // 16-byte aligned
        const float x0 = even ? dq[d][0] : got0, x1 = even ? dq[d][1] : got1;
        const float x2 = even ? got0 : dq[d][2], x3 = even ? got1 : dq[d][3];
#if __CUDA_ARCH__ >= 900  // a vector atomic: a quarter of the operations
        atomicAdd(reinterpret_cast<float4*>(dst), make_float4(scale * x0, scale * x1, scale * x2, scale * x3));
#else
        atomicAdd(dst, scale * x0);
        atomicAdd(dst + 1, scale * x1);
        atomicAdd(dst + 2, scale * x2);
        atomicAdd(dst + 3, scale * x3);
#endif
      }
    }
  }
  async::wait<0>();  // no copy outlives the block (K and V when no query tile attends these keys)

  // dK (times scale) and dV of the lane's two keys.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (keys[h] >= S) continue;
    T* gk_row = gk + slice_offset(gks, n, heads) + keys[h] * gks.row;
    T* gv_row = gv + slice_offset(gvs, n, heads) + keys[h] * gvs.row;
#pragma unroll
    for (int d = 0; d < D / 8; ++d) {
      const int col = 8 * d + 2 * t;
      if (col >= E) continue;
      *reinterpret_cast<uint32_t*>(gk_row + col) = mma::pack2<T>(scale * dk[d][2 * h], scale * dk[d][2 * h + 1]);
      *reinterpret_cast<uint32_t*>(gv_row + col) = mma::pack2<T>(dv[d][2 * h], dv[d][2 * h + 1]);
    }
  }
#endif
}

}  // namespace ember::cuda::flash
