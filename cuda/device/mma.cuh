// Warp-level tensor-core primitives with documented register layouts (PTX
// `mma.sync.m16n8k16` and `ldmatrix`), for kernels that keep their operands
// and accumulators in registers instead of nvcuda::wmma's opaque fragments.
//
// Layouts (lane = 4 g + t, g = lane / 4 in 0..7, t = lane % 4 in 0..3), with
// two 16-bit elements per 32-bit register, the lower column/row first:
//   A, 16 x 16 (row-major): a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..2t+1],
//                           a[2] = A[g][2t+8..2t+9], a[3] = A[g+8][2t+8..2t+9]
//   B, 16 x 8 (k x n):      b[0] = B[2t..2t+1][g], b[1] = B[2t+8..2t+9][g]
//   C, 16 x 8 (float):      c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1]
// So the C fragments of two adjacent 8-column blocks, rounded to 16 bits, are
// exactly an A fragment of the 16 x 16 block they make up (FlashAttention-2
// multiplies its probabilities by V straight from the score registers).
//
// tests/cpp/cuda_emulation.h implements the same functions for the host
// (EMBER_CUDA_EMULATION) by exchanging the fragments through the warp, so
// the host tests check kernels against these layouts.
#pragma once
#include <cstdint>
#include <cstring>

#ifndef EMBER_CUDA_EMULATION
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace ember::cuda::mma {

#ifndef EMBER_CUDA_EMULATION

// c += A B for one 16 x 16 x 8 block (sm_80+).
template <class T>
__device__ __forceinline__ void mma_16x8x16(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);

template <>
__device__ __forceinline__ void mma_16x8x16<__nv_bfloat16>(float (&c)[4], const uint32_t (&a)[4],
                                                           const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

template <>
__device__ __forceinline__ void mma_16x8x16<__half>(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// Four 8 x 8 matrices of 16-bit elements from shared memory: lane 8i + j
// gives the address of row j of matrix i (16 bytes, 16-byte aligned); r[i]
// then holds elements (g, 2t) and (g, 2t + 1) of matrix i: a B fragment
// register when the matrix is 8 n-rows of a [n, k] block (B = block^T).
template <class T>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const T* row_address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto shared = static_cast<uint32_t>(__cvta_generic_to_shared(row_address));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared));
#endif
}

// The same, transposed: lane
// 8i + j gives the address of row j of matrix i (16 bytes, 16-byte aligned);
// r[i] then holds elements (2t, g) and (2t + 1, g) of matrix i, i.e. a B
// fragment register when the matrix is 8 k-rows of a row-major [k, n] block.
template <class T>
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const T* row_address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto shared = static_cast<uint32_t>(__cvta_generic_to_shared(row_address));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared));
#endif
}

// Two floats rounded to T, `lo` in the low 16 bits.
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);

template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  uint32_t r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

template <>
__device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  const __half2 v = __floats2half2_rn(lo, hi);
  uint32_t r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

#else  // the host emulation: the same semantics, built from warp exchanges

template <class T>
float element(uint32_t reg, int i) {  // element i (0 low, 1 high) of a register
  T v[2];
  std::memcpy(v, &reg, sizeof reg);
  return load(v, i);
}

template <class T>
void mma_16x8x16(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  struct A { uint32_t r[4]; };
  struct B { uint32_t r[2]; };
  A all_a[32];
  B all_b[32];
  emu::warp_all_gather(A{{a[0], a[1], a[2], a[3]}}, all_a);
  emu::warp_all_gather(B{{b[0], b[1]}}, all_b);
  float ma[16][16], mb[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 2; ++i) {
      ma[g][2 * t + i] = element<T>(all_a[lane].r[0], i);
      ma[g + 8][2 * t + i] = element<T>(all_a[lane].r[1], i);
      ma[g][2 * t + 8 + i] = element<T>(all_a[lane].r[2], i);
      ma[g + 8][2 * t + 8 + i] = element<T>(all_a[lane].r[3], i);
      mb[2 * t + i][g] = element<T>(all_b[lane].r[0], i);
      mb[2 * t + 8 + i][g] = element<T>(all_b[lane].r[1], i);
    }
  }
  const int g = static_cast<int>(emu::lane_id()) / 4, t = static_cast<int>(emu::lane_id()) % 4;
  for (int e = 0; e < 4; ++e) {
    const int row = g + (e >= 2 ? 8 : 0), col = 2 * t + e % 2;
    double s = c[e];
    for (int k = 0; k < 16; ++k) s += static_cast<double>(ma[row][k]) * mb[k][col];
    c[e] = static_cast<float>(s);
  }
}

template <class T>
void ldmatrix_x4_any(uint32_t (&r)[4], const T* row_address, bool trans) {
  if (reinterpret_cast<uintptr_t>(row_address) % 16 != 0) emu::fail("misaligned ldmatrix row");
  const T* rows[32];
  emu::warp_all_gather(row_address, rows);
  const int g = static_cast<int>(emu::lane_id()) / 4, t = static_cast<int>(emu::lane_id()) % 4;
  for (int i = 0; i < 4; ++i) {
    T v[2];
    if (trans) v[0] = rows[8 * i + 2 * t][g], v[1] = rows[8 * i + 2 * t + 1][g];
    else v[0] = rows[8 * i + g][2 * t], v[1] = rows[8 * i + g][2 * t + 1];
    std::memcpy(&r[i], v, sizeof r[i]);
  }
}

template <class T>
void ldmatrix_x4(uint32_t (&r)[4], const T* row_address) {
  ldmatrix_x4_any(r, row_address, false);
}

template <class T>
void ldmatrix_x4_trans(uint32_t (&r)[4], const T* row_address) {
  ldmatrix_x4_any(r, row_address, true);
}

template <class T>
uint32_t pack2(float lo, float hi) {
  T v[2];
  store(v, 0, lo);
  store(v, 1, hi);
  uint32_t r;
  std::memcpy(&r, v, sizeof r);
  return r;
}

#endif  // EMBER_CUDA_EMULATION

// Two adjacent 16-bit elements (p 4-byte aligned) as one register.
template <class T>
__device__ __forceinline__ uint32_t load_pair(const T* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

}  // namespace ember::cuda::mma
