// The fused attention forward with scores, probabilities and output in
// registers (FlashAttention-2's forward): mma.sync fragments, whose layout is
// documented (cuda/device/mma.cuh), instead of wmma's, which must go through
// shared memory to be rescaled. Same grid, tiles, inputs and outputs as
// flash_forward_kernel in flash_attention.cuh (and the same backward reads
// its logsumexp); cuda/attention.cu picks one of the two.
//
// Per warp and 64-key tile: S = Q K^T as 8 accumulator blocks of 16 x 8
// (lane 4g + t holds rows g and g + 8, columns 2t and 2t + 1 of each), the
// online softmax on those registers (a row's four lanes agree on its max
// through two shuffles), and O += P V with P taken from the score registers
// rounded to 16 bits (warp_gemm.cuh; K's and V's B fragments come from
// ldmatrix, V's transposed). Shared memory holds the Q tile and two buffers
// of K and V: the next tile's cp.async copies run while this one is used.
#pragma once
#include <ember/cuda/device/flash_attention.cuh>
#include <ember/cuda/device/mma.cuh>
#include <ember/cuda/device/warp_gemm.cuh>

namespace ember::cuda::flash {

// Q, and two buffers each of K and V (the next tile loads while this one is used).
constexpr int forward_mma_smem_bytes(int D, int elem) { return (kBlockM + 4 * kBlockN) * (D + kPad) * elem; }

template <class T, int D>
__global__ void __launch_bounds__(kThreads, D <= 64 ? 4 : 2)  // 4 blocks per SM up to head size 64
    flash_forward_mma_kernel(T* out, RowStrides os, float* lse, const T* q, RowStrides qs, const T* k, RowStrides ks,
                             const T* v, RowStrides vs, int64_t heads, int64_t L, int64_t S, int E, float scale_log2,
                             bool causal, int64_t q_tiles) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  constexpr int ldh = D + kPad;
  constexpr int kKeyBlocks = kBlockN / 8;  // 8-key accumulator blocks of a tile
  constexpr int kDimBlocks = D / 8;        // 8-column accumulator blocks of the output
  EMBER_FLASH_SHARED_MEMORY(smem);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  T* q_s = reinterpret_cast<T*>(smem);
  // Buffer b (0 or 1) of K and of V. Offsets, not arrays of pointers: an
  // array indexed at run time would live in local memory.
  auto k_buf = [&](int64_t b) { return q_s + (kBlockM + b * kBlockN) * ldh; };
  auto v_buf = [&](int64_t b) { return q_s + (kBlockM + (2 + b) * kBlockN) * ldh; };

  const int64_t n = blockIdx.x / q_tiles;
  const int64_t q0 = (q_tiles - 1 - blockIdx.x % q_tiles) * kBlockM;  // the longest causal tiles start first
  const int64_t warp_row0 = q0 + warp * 16;
  const int64_t rows[2] = {warp_row0 + g, warp_row0 + g + 8};  // the lane's two query rows
  const T* kn = k + slice_offset(ks, n, heads);
  const T* vn = v + slice_offset(vs, n, heads);

  // Q and the first K / V tile in one group of async copies; each iteration
  // then starts the next tile's copies before computing on its own.
  load_tile_async<D>(q_s, q + slice_offset(qs, n, heads), qs.row, q0, L, E);
  load_tile_async<D>(k_buf(0), kn, ks.row, 0, S, E);
  load_tile_async<D>(v_buf(0), vn, vs.row, 0, S, E);
  async::commit();
  uint32_t qa[D / 16][4];  // the warp's 16 query rows as A fragments, reused against every key tile

  float m[2] = {-INFINITY, -INFINITY};  // running max of each row (log2 units)
  float l[2] = {0.f, 0.f};              // this lane's part of each row's running sum
  float o[kDimBlocks][4];
#pragma unroll
  for (int d = 0; d < kDimBlocks; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.f;

  // Causal: keys after the tile's last query row are masked for every row.
  const int64_t kv_end = causal && q0 + kBlockM < S ? q0 + kBlockM : S;
  for (int64_t kv0 = 0, tile = 0; kv0 < kv_end; kv0 += kBlockN, ++tile) {
    const T* k_s = k_buf(tile % 2);
    const T* v_s = v_buf(tile % 2);
    if (kv0 + kBlockN < kv_end) {  // the other buffers were released by the last iteration's barrier
      load_tile_async<D>(k_buf((tile + 1) % 2), kn, ks.row, kv0 + kBlockN, S, E);
      load_tile_async<D>(v_buf((tile + 1) % 2), vn, vs.row, kv0 + kBlockN, S, E);
      async::commit();
      async::wait<1>();  // everything but the copies just started
    } else {
      async::wait<0>();
    }
    __syncthreads();  // the block's copies of this tile (and, first, of Q) are visible
    if (tile == 0) mma::load_a_rows<T, D>(qa, q_s, ldh, warp * 16, lane);

    float s[kKeyBlocks][4];  // S = Q K^T: block j holds keys 8j..8j+7
    mma::rows_times_tile_t<T, D>(s, qa, k_s, ldh, lane);

    // Scale, mask (only tiles that reach past S or the warp's diagonal), and
    // each row's max over the tile: the lane's values, then its row's 4 lanes.
    const bool masked = kv0 + kBlockN > S || (causal && kv0 + kBlockN - 1 > warp_row0);
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < kKeyBlocks; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[j][e] * scale_log2;
        if (masked) {
          const int64_t key = kv0 + 8 * j + 2 * t + e % 2;
          if (key >= S || (causal && key > rows[e / 2])) x = -INFINITY;
        }
        s[j][e] = x;
        tile_max[e / 2] = fmaxf(tile_max[e / 2], x);
      }
    }
    float ref[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 1));
      tile_max[h] = fmaxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 2));
      const float m_new = fmaxf(m[h], tile_max[h]);
      ref[h] = m_new == -INFINITY ? 0.f : m_new;  // no key seen yet: p = 0, not NaN
      const float alpha = exp2f(m[h] - ref[h]);   // rescales what was summed so far
      l[h] *= alpha;
      m[h] = m_new;
#pragma unroll
      for (int d = 0; d < kDimBlocks; ++d) {
        o[d][2 * h] *= alpha;
        o[d][2 * h + 1] *= alpha;
      }
    }

    // P (the row sums from P as computed, before rounding), then O += P V
    // with P rounded to T straight from the score registers.
#pragma unroll
    for (int j = 0; j < kKeyBlocks; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] = exp2f(s[j][e] - ref[e / 2]);
        l[e / 2] += s[j][e];
      }
    mma::acc_times_tile<T, D>(o, s, v_s, ldh, lane);
    __syncthreads();  // every warp is done with this K / V tile before its buffers take the one after next
  }

  // Each row's sum over its 4 lanes, then the normalised output and logsumexp.
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
    l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    if (rows[h] >= L) continue;
    const float inv = l[h] > 0.f ? 1.f / l[h] : 0.f;
    T* orow = out + slice_offset(os, n, heads) + rows[h] * os.row;
#pragma unroll
    for (int d = 0; d < kDimBlocks; ++d) {
      const int col = d * 8 + 2 * t;  // E % 8 == 0: both columns below E or neither
      if (col < E) *reinterpret_cast<uint32_t*>(orow + col) = mma::pack2<T>(o[d][2 * h] * inv, o[d][2 * h + 1] * inv);
    }
    if (t == 0) lse[n * L + rows[h]] = l[h] > 0.f ? (m[h] + log2f(l[h])) * kLn2 : -INFINITY;
  }
#endif
}

}  // namespace ember::cuda::flash
