// Host stand-ins for the CUDA features the flash attention kernels use
// (cuda/device/flash_attention.cuh), so that tests/cpp/test_flash_emulation.cpp
// can run those kernels on the CPU: a block is 128 std::threads with real
// barriers for __syncthreads / __syncwarp and a per-warp exchange for
// __shfl_xor_sync; wmma fragments hold the whole 16x16 tile in every lane
// (loads check wmma's 32-byte alignment and ldm rules; one lane stores, so a
// missing __syncwarp before other lanes read is likely to show). The 16-bit
// element type is bfloat16 rounded to nearest even. Include only in that test.
#pragma once
#include <atomic>
#include <cassert>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __align__(x)
#define __CUDA_ARCH__ 800
#define EMBER_FLASH_SHARED_MEMORY(name) unsigned char* name = emu::smem_ptr

struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct uint4 { unsigned x, y, z, w; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }

// A reusable barrier; waiting threads yield (128 threads share 2 cores in CI).
struct Barrier {
  explicit Barrier(int n) : count(n) {}
  void wait() {
    const long g = gen.load();
    if (arrived.fetch_add(1) + 1 == count) {
      arrived.store(0);
      gen.fetch_add(1);
      return;
    }
    while (gen.load() == g) std::this_thread::yield();
  }
  const int count;
  std::atomic<int> arrived{0};
  std::atomic<long> gen{0};
};

namespace emu {
thread_local dim3 tid, bid;
thread_local Barrier* block_bar;
thread_local Barrier* warp_bar;
thread_local float* warp_xch;
thread_local unsigned char* smem_ptr;
inline std::mutex atomic_mutex;
}
#define threadIdx emu::tid
#define blockIdx emu::bid
inline dim3 blockDim, gridDim;
inline void __syncthreads() { emu::block_bar->wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::warp_bar->wait(); }
inline float __shfl_xor_sync(unsigned, float v, int mask) {
  const int lane = threadIdx.x % 32;
  emu::warp_xch[lane] = v;
  emu::warp_bar->wait();
  float r = emu::warp_xch[lane ^ mask];
  emu::warp_bar->wait();
  return r;
}
inline float atomicAdd(float* p, float v) { std::lock_guard<std::mutex> g(emu::atomic_mutex); float o = *p; *p += v; return o; }

// bf16 with round to nearest even
struct Bf16 { uint16_t bits; };
inline float to_float(Bf16 h) { uint32_t u = uint32_t(h.bits) << 16; float f; std::memcpy(&f, &u, 4); return f; }
inline Bf16 to_bf16(float f) { uint32_t u; std::memcpy(&u, &f, 4); if (std::isnan(f)) return {0x7fc0}; u += 0x7fff + ((u >> 16) & 1); return {uint16_t(u >> 16)}; }
namespace ember::cuda {
inline float load(const Bf16* p, int64_t i) { return to_float(p[i]); }
inline void store(Bf16* p, int64_t i, float v) { p[i] = to_bf16(v); }
inline float load(const float* p, int64_t i) { return p[i]; }
}

namespace nvcuda::wmma {
struct matrix_a {}; struct matrix_b {}; struct accumulator {}; struct row_major {}; struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment { float x[256]; };
template <class F> void fill_fragment(F& f, float v) { for (float& e : f.x) e = v; }
template <class Use, class T, class Layout>
void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout>& f, const T* p, unsigned ldm) {
  if (reinterpret_cast<uintptr_t>(p) % 32 != 0 || ldm % 8 != 0) { std::printf("MISALIGNED load\n"); std::abort(); }
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c)
      f.x[r * 16 + c] = to_float(std::is_same<Layout, row_major>::value ? p[r * ldm + c] : p[c * ldm + r]);
}
template <class TA, class LA, class TB, class LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float>& d, const fragment<matrix_a, 16, 16, 16, TA, LA>& a,
              const fragment<matrix_b, 16, 16, 16, TB, LB>& b, const fragment<accumulator, 16, 16, 16, float>& c) {
  float t[256];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float s = c.x[i * 16 + j];
      for (int k = 0; k < 16; ++k) s += a.x[i * 16 + k] * b.x[k * 16 + j];
      t[i * 16 + j] = s;
    }
  std::memcpy(d.x, t, sizeof t);
}
inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 16, float>& f, unsigned ldm, layout_t) {
  if (reinterpret_cast<uintptr_t>(p) % 32 != 0 || ldm % 4 != 0) { std::printf("MISALIGNED store\n"); std::abort(); }
  if (threadIdx.x % 32 != 0) return;  // one lane writes: readers need a __syncwarp
  for (int r = 0; r < 16; ++r) for (int c = 0; c < 16; ++c) p[r * ldm + c] = f.x[r * 16 + c];
}
}  // namespace nvcuda::wmma

// Runs kernel over grid blocks of `threads` threads with `smem` bytes of shared memory.
template <class F>
void launch(unsigned grid, unsigned threads, size_t smem, F kernel) {
  gridDim.x = grid; blockDim.x = threads;
  std::vector<unsigned char> buf(smem + 256);
  unsigned char* base = buf.data() + (256 - reinterpret_cast<uintptr_t>(buf.data()) % 256);
  for (unsigned b = 0; b < grid; ++b) {
    std::memset(base, 0xAB, smem);  // garbage, like real shared memory (0xABAB as bf16 is a finite value)
    Barrier block(threads);
    std::vector<Barrier*> warps; std::vector<std::vector<float>> xch;
    for (unsigned w = 0; w < threads / 32; ++w) { warps.push_back(new Barrier(32)); xch.emplace_back(32); }
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        emu::tid.x = t; emu::bid.x = b; emu::block_bar = &block; emu::warp_bar = warps[t / 32];
        emu::warp_xch = xch[t / 32].data(); emu::smem_ptr = base;
        kernel();
      });
    for (auto& th : ts) th.join();
    for (auto* w : warps) delete w;
  }
}
