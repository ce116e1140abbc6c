// A warp's small matrix products on mma.sync fragments (cuda/device/mma.cuh):
// 16 rows held in registers against a 64-row tile in shared memory. The
// building blocks of the register-resident attention kernels
// (flash_forward_mma.cuh, flash_backward_mma.cuh). Lane = 4g + t throughout.
#pragma once
#include <ember/cuda/device/mma.cuh>

namespace ember::cuda::mma {

// The warp's 16 rows (first row `row0`) of a shared [*, ld] tile as A
// fragments over its first K columns.
template <class T, int K>
__device__ __forceinline__ void load_a_rows(uint32_t (&a)[K / 16][4], const T* tile, int ld, int row0, int lane) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    const T* p = tile + (row0 + g) * ld + kk * 16 + 2 * t;
    a[kk][0] = load_pair(p);
    a[kk][1] = load_pair(p + 8 * ld);
    a[kk][2] = load_pair(p + 8);
    a[kk][3] = load_pair(p + 8 * ld + 8);
  }
}

// c = A tile^T: A is 16 x K in registers, tile a shared [64, K] tile (row
// stride ld), c[j] the accumulator block of tile rows 8j..8j+7. B = tile^T,
// so the B fragments are the tile's rows as stored: ldmatrix (not transposed),
// lanes 8i + r naming row r of tile rows 8j + 8 (i / 2), columns 8 (i % 2),
// which gives two blocks' fragments per instruction.
template <class T, int K>
__device__ __forceinline__ void rows_times_tile_t(float (&c)[8][4], const uint32_t (&a)[K / 16][4], const T* tile,
                                                  int ld, int lane) {
#pragma unroll
  for (int j = 0; j < 8; j += 2) {
#pragma unroll
    for (int e = 0; e < 4; ++e) c[j][e] = c[j + 1][e] = 0.f;
    const T* row = tile + (8 * j + lane % 8 + (lane / 16) * 8) * ld + (lane / 8) % 2 * 8;
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      uint32_t b[4];
      ldmatrix_x4(b, row + kk * 16);
      const uint32_t b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
      mma_16x8x16<T>(c[j], a[kk], b0);
      mma_16x8x16<T>(c[j + 1], a[kk], b1);
    }
  }
}

// acc += X tile: X ([16, 64]) in accumulator layout (x[j] its columns
// 8j..8j+7, rounded to T here: two blocks make one A fragment), tile a
// shared [64, N] tile (row stride ld), acc[d] the blocks of columns 8d..8d+7.
// The B fragments come transposed by ldmatrix: lanes 8i + r name tile row
// 16c + r (+8 for odd i), columns 8d (+8 for i >= 2).
template <class T, int N>
__device__ __forceinline__ void acc_times_tile(float (&acc)[N / 8][4], const float (&x)[8][4], const T* tile, int ld,
                                               int lane) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const uint32_t a[4] = {pack2<T>(x[2 * c][0], x[2 * c][1]), pack2<T>(x[2 * c][2], x[2 * c][3]),
                           pack2<T>(x[2 * c + 1][0], x[2 * c + 1][1]), pack2<T>(x[2 * c + 1][2], x[2 * c + 1][3])};
    const T* row = tile + (16 * c + lane % 8 + (lane / 8) % 2 * 8) * ld + (lane / 16) * 8;
#pragma unroll
    for (int d = 0; d < N / 8; d += 2) {
      uint32_t b[4];
      ldmatrix_x4_trans(b, row + d * 8);
      const uint32_t b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
      mma_16x8x16<T>(acc[d], a, b0);
      mma_16x8x16<T>(acc[d + 1], a, b1);
    }
  }
}

}  // namespace ember::cuda::mma
