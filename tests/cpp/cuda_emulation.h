// Host stand-ins for the CUDA features the flash attention kernels use
// (cuda/device/flash_attention.cuh), so that tests/cpp/test_flash_emulation.cpp
// can run those kernels on the CPU: a block's threads are fibers (ucontext)
// that switch at __syncthreads / __syncwarp barriers (a barrier some threads
// never reach is reported), __shfl_xor_sync exchanges through the warp; wmma fragments hold the whole 16x16 tile in every lane
// (loads check wmma's 32-byte alignment and ldm rules; one lane stores, so a
// missing __syncwarp before other lanes read is likely to show). The 16-bit
// element type is bfloat16 rounded to nearest even. Include only in that test.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <type_traits>
#include <vector>

#include <ucontext.h>

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __align__(x)
#define __CUDA_ARCH__ 900
#define EMBER_FLASH_SHARED_MEMORY(name) unsigned char* name = emu::smem_ptr

struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct uint4 { unsigned x, y, z, w; };
struct float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }

namespace emu {
struct Fiber;
}

// __syncthreads / __syncwarp: the threads of a block are fibers on one OS
// thread (ucontext); a waiting fiber yields to the scheduler in launch().
struct Barrier {
  explicit Barrier(int n) : count(n) {}
  void wait();
  const int count;
  int arrived = 0;
  long gen = 0;
};

namespace emu {
struct Fiber {
  ucontext_t ctx;
  std::vector<char> stack;
  unsigned tid = 0;
  bool done = false;
  const Barrier* waiting = nullptr;
  long wait_gen = 0;
};
inline ucontext_t scheduler;
inline Fiber* current = nullptr;
inline std::function<void()> kernel;
inline dim3 tid, bid;
inline Barrier* block_bar;
inline Barrier* warp_bar;
inline float* warp_xch;
inline unsigned char* smem_ptr;
inline void entry() {
  kernel();
  current->done = true;  // returns to the scheduler through uc_link
}
}  // namespace emu

inline void Barrier::wait() {
  if (++arrived == count) {  // the last thread to arrive releases the others
    arrived = 0;
    ++gen;
    return;
  }
  emu::Fiber* f = emu::current;
  f->waiting = this;
  f->wait_gen = gen;
  swapcontext(&f->ctx, &emu::scheduler);
}

#define threadIdx emu::tid
#define blockIdx emu::bid
inline dim3 blockDim, gridDim;
inline void __syncthreads() { emu::block_bar->wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::warp_bar->wait(); }
inline float __shfl_xor_sync(unsigned, float v, int mask) {
  const unsigned lane = threadIdx.x % 32;
  emu::warp_xch[lane] = v;
  emu::warp_bar->wait();
  const float r = emu::warp_xch[lane ^ static_cast<unsigned>(mask)];
  emu::warp_bar->wait();
  return r;
}
inline float atomicAdd(float* p, float v) {
  const float old = *p;
  *p += v;
  return old;
}
inline float4 atomicAdd(float4* p, float4 v) {  // sm_90's vector atomic; needs 16-byte alignment
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0) {
    std::printf("MISALIGNED float4 atomic\n");
    std::abort();
  }
  const float4 old = *p;
  p->x += v.x, p->y += v.y, p->z += v.z, p->w += v.w;
  return old;
}

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

// Runs kernel over `grid` blocks of `threads` threads with `smem` bytes of
// shared memory, one block after the other; the threads of a block run as
// fibers, switching at barriers, resumed in a shuffled order. A block whose threads wait forever (a
// barrier not reached by all) aborts with a message.
template <class F>
void launch(unsigned grid, unsigned threads, size_t smem, F kernel) {
  gridDim.x = grid;
  blockDim.x = threads;
  emu::kernel = kernel;
  std::vector<unsigned char> buf(smem + 256);
  unsigned char* base = buf.data() + (256 - reinterpret_cast<uintptr_t>(buf.data()) % 256);
  std::vector<emu::Fiber> fibers(threads);
  for (auto& f : fibers) f.stack.resize(256 * 1024);
  for (unsigned b = 0; b < grid; ++b) {
    std::memset(base, 0xAB, smem);  // garbage, like real shared memory (0xABAB is a finite bfloat16)
    Barrier block(static_cast<int>(threads));
    std::vector<Barrier> warps(threads / 32, Barrier(32));
    std::vector<float> xch(threads);
    for (unsigned t = 0; t < threads; ++t) {
      emu::Fiber& f = fibers[t];
      f.tid = t;
      f.done = false;
      f.waiting = nullptr;
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = f.stack.data();
      f.ctx.uc_stack.ss_size = f.stack.size();
      f.ctx.uc_link = &emu::scheduler;
      makecontext(&f.ctx, emu::entry, 0);
    }
    emu::bid.x = b;
    emu::block_bar = &block;
    emu::smem_ptr = base;
    std::vector<unsigned> order(threads);
    for (unsigned t = 0; t < threads; ++t) order[t] = t;
    std::mt19937 rng(b);
    for (bool all_done = false; !all_done;) {
      all_done = true;
      bool progress = false;
      std::shuffle(order.begin(), order.end(), rng);  // no thread order may be relied upon
      for (unsigned t : order) {
        emu::Fiber& f = fibers[t];
        if (f.done) continue;
        all_done = false;
        if (f.waiting != nullptr && f.waiting->gen == f.wait_gen) continue;  // still blocked
        f.waiting = nullptr;
        progress = true;
        emu::current = &f;
        emu::tid.x = f.tid;
        emu::warp_bar = &warps[f.tid / 32];
        emu::warp_xch = xch.data() + (f.tid / 32) * 32;
        swapcontext(&emu::scheduler, &f.ctx);
      }
      if (!all_done && !progress) {
        std::printf("cuda_emulation: block %u deadlocked at a barrier\n", b);
        std::abort();
      }
    }
  }
}
