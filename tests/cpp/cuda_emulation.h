// Host stand-ins for the CUDA features ember's kernels use, so that tests can
// compile a kernel's real source (the cuda/device/*.cuh headers the .cu files
// include) for the CPU and run it against a reference on machines without a
// GPU. Include it after the ember headers a test needs and before the kernel
// headers (it defines __global__, __device__, threadIdx, ... as macros).
//
// - A launch runs the grid's blocks one after the other, in a shuffled order;
//   a block's threads are fibers (ucontext) on one OS thread that switch at
//   __syncthreads / __syncwarp and at every warp exchange, resumed in a
//   shuffled order, so no thread or block order can be relied upon. A barrier
//   some threads never reach (e.g. a thread returned early, or a shuffle in
//   a divergent branch) deadlocks the block and aborts with a message.
// - Warp shuffles (__shfl_sync / _up / _down / _xor, any width) and votes
//   (__ballot_sync, __any_sync, __all_sync) exchange values through the warp
//   with CUDA's rules for lanes out of range; a full mask in a partial warp,
//   or a partial mask, aborts (neither occurs in ember's kernels).
// - __shared__ variables become function statics: one copy, which suits
//   blocks that run one at a time (they keep the previous block's values,
//   as garbage). Dynamic shared memory: EMBER_FLASH_SHARED_MEMORY, filled
//   with 0xAB bytes before each block.
// - Atomics are plain read-modify-writes (one OS thread).
// - __half and __nv_bfloat16 are 16-bit structs with CUDA's conversions,
//   rounded to nearest even (from float or directly from double), written
//   independently of ember's CPU conversions so that tests can compare them.
// - mma.sync and ldmatrix (cuda/device/mma.cuh's emulated branch) gather the
//   warp's registers with emu::warp_all_gather and compute each lane's part.
// - cp.async copies land when their thread waits for their group in half the
//   blocks, at once in the others (emu::eager_odd_blocks picks which half);
//   a thread that ends with copies it never waited for aborts.
// - nvcuda::wmma fragments hold the whole 16x16 tile in every lane (loads
//   check wmma's 32-byte alignment and ldm rules; one lane stores, so a
//   missing __syncwarp before other lanes read is likely to show); elements
//   are read through to_float(), found by argument-dependent lookup.
// Include only in tests.
#pragma once
#define EMBER_CUDA_EMULATION 1

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

#include <math.h>  // float overloads (exp(float), sqrt(float), ...) in the global namespace, as in device code
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(x)
#define __shared__ static
#define __CUDA_ARCH__ 900
#define EMBER_FLASH_SHARED_MEMORY(name) unsigned char* name = emu::smem_ptr

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint4 { unsigned x, y, z, w; };
struct float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
constexpr int warpSize = 32;
namespace cuda::std {  // libcu++'s tuple as the kernels use it
using ::std::get;
using ::std::tuple;
}  // namespace cuda::std

// ---- device math that has no host twin
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __saturatef(float x) { return x != x ? 0.f : std::min(std::max(x, 0.f), 1.f); }

// ---- 16-bit floats: bits only; conversions as CUDA's (round to nearest even)
struct __half { uint16_t x; };
struct __nv_bfloat16 { uint16_t x; };

namespace emu {
// Rounds |v| (finite, not NaN) to a binary format with `mant` stored mantissa
// bits, exponent bias `bias` and `exp_bits` exponent bits; returns the bits
// without the sign. Uses exact double scaling and nearbyint (ties to even).
inline uint32_t round_to_format(double a, int mant, int bias, int exp_bits) {
  const int emin = 1 - bias, emax_field = (1 << exp_bits) - 1;
  if (a == 0) return 0;
  int e = std::ilogb(a);  // a in [2^e, 2^(e+1))
  if (e < emin) {         // subnormal: units of 2^(emin - mant)
    const double r = std::nearbyint(std::ldexp(a, mant - emin));
    return static_cast<uint32_t>(r);  // r == 2^mant is the smallest normal: its bits are right
  }
  double r = std::nearbyint(std::ldexp(a, mant - e));  // in [2^mant, 2^(mant+1)]
  if (r == std::ldexp(1.0, mant + 1)) r /= 2, ++e;
  if (e + bias >= emax_field) return static_cast<uint32_t>(emax_field) << mant;  // overflow: inf
  return (static_cast<uint32_t>(e + bias) << mant) | (static_cast<uint32_t>(r) - (1u << mant));
}
inline uint16_t to_16(double v, int mant, int bias, int exp_bits, uint16_t nan) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return nan;
  if (std::isinf(v)) return sign | static_cast<uint16_t>(((1u << exp_bits) - 1) << mant);
  return sign | static_cast<uint16_t>(round_to_format(std::fabs(v), mant, bias, exp_bits));
}
inline float from_16(uint16_t b, int mant, int bias, int exp_bits) {
  const int field = (b >> mant) & ((1 << exp_bits) - 1);
  const uint32_t m = b & ((1u << mant) - 1);
  double v;
  if (field == (1 << exp_bits) - 1) v = m ? NAN : INFINITY;
  else if (field == 0) v = std::ldexp(static_cast<double>(m), 1 - bias - mant);
  else v = std::ldexp(static_cast<double>(m | (1u << mant)), field - bias - mant);
  return static_cast<float>((b & 0x8000) ? -v : v);
}
}  // namespace emu

inline __half __double2half(double v) { return {emu::to_16(v, 10, 15, 5, 0x7fff)}; }
inline __half __float2half_rn(float v) { return __double2half(v); }  // float -> double is exact
inline __half __float2half(float v) { return __float2half_rn(v); }
inline float __half2float(__half h) { return emu::from_16(h.x, 10, 15, 5); }
inline __nv_bfloat16 __double2bfloat16(double v) { return {emu::to_16(v, 7, 127, 8, 0x7fff)}; }
inline __nv_bfloat16 __float2bfloat16_rn(float v) { return __double2bfloat16(v); }
inline __nv_bfloat16 __float2bfloat16(float v) { return __float2bfloat16_rn(v); }
inline float __bfloat162float(__nv_bfloat16 h) { return emu::from_16(h.x, 7, 127, 8); }
inline float to_float(__half h) { return __half2float(h); }
inline float to_float(__nv_bfloat16 h) { return __bfloat162float(h); }

// ---- threads, blocks and barriers
namespace emu {

struct Fiber;

// __syncthreads / __syncwarp: a waiting fiber yields to the scheduler in launch().
struct Barrier {
  explicit Barrier(int n) : count(n) {}
  void wait();
  int count;
  int arrived = 0;
  long gen = 0;
};

// A cp.async copy not yet completed: it lands when its thread waits for its group.
struct AsyncCopy {
  void* dst;
  const void* src;
  size_t bytes, src_bytes;  // src_bytes < bytes: the rest is zero-filled
};

struct Fiber {
  ucontext_t ctx;
  char* stack = nullptr;
  dim3 tid;
  unsigned linear = 0;
  bool done = false;
  const Barrier* waiting = nullptr;
  long wait_gen = 0;
  std::vector<AsyncCopy> open_group;                 // issued since the last commit
  std::vector<std::vector<AsyncCopy>> pending_groups;  // committed, oldest first
};

constexpr size_t kStackBytes = 256 * 1024;
constexpr size_t kSlot = 16;  // bytes per lane in a warp exchange

inline ucontext_t scheduler;
inline Fiber* current = nullptr;
inline std::function<void()> kernel;
inline dim3 tid, bid;
inline Barrier* block_bar;
inline Barrier* warp_bar;
inline unsigned char* warp_xch;  // the current warp's exchange slots
inline unsigned warp_lanes = 32;  // lanes in the current thread's warp
inline unsigned char* smem_ptr;

[[noreturn]] inline void fail(const char* what) {
  std::printf("cuda_emulation: %s\n", what);
  std::fflush(stdout);
  std::abort();
}

inline void entry() {
  kernel();
  if (!current->open_group.empty() || !current->pending_groups.empty()) {
    fail("a thread ended with cp.async copies it never waited for");
  }
  current->done = true;  // returns to the scheduler through uc_link
}

// Fiber stacks, reused by every launch (pages are touched only as used).
inline char* stack_for(unsigned t) {
  static std::vector<std::unique_ptr<char[]>> pool;
  while (pool.size() <= t) pool.emplace_back(new char[kStackBytes]);
  return pool[t].get();
}

inline unsigned lane_id() { return current->linear % 32; }

inline void check_mask(unsigned mask, const char* what) {
  if (mask != 0xffffffffu) fail(what);  // partial masks: not emulated
  if (warp_lanes != 32) fail("a warp-wide operation with a full mask in a partial warp");
}

// Each lane puts v in its slot; once the whole warp has, each reads lane
// src_of(lane) (a negative source keeps its own value).
template <class T, class Src>
T exchange(unsigned mask, T v, Src src_of, const char* what) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kSlot, "warp exchange of an unsupported type");
  check_mask(mask, what);
  const unsigned lane = lane_id();
  std::memcpy(warp_xch + lane * kSlot, &v, sizeof(T));
  warp_bar->wait();
  const int src = src_of(lane);
  T r = v;
  if (src >= 0) std::memcpy(&r, warp_xch + static_cast<unsigned>(src) * kSlot, sizeof(T));
  warp_bar->wait();  // nobody overwrites a slot before every lane has read
  return r;
}

// Every lane's v, in lane order, to every lane of the warp (the register
// exchanges of mma.sync and ldmatrix; see cuda/device/mma.cuh).
template <class T>
void warp_all_gather(const T& v, T (&all)[32]) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kSlot, "warp exchange of an unsupported type");
  check_mask(0xffffffffu, "a warp-wide matrix operation");
  std::memcpy(warp_xch + lane_id() * kSlot, &v, sizeof(T));
  warp_bar->wait();
  for (unsigned lane = 0; lane < 32; ++lane) std::memcpy(&all[lane], warp_xch + lane * kSlot, sizeof(T));
  warp_bar->wait();  // nobody overwrites a slot before every lane has read
}

// cp.async (cuda/device/async_copy.cuh's emulated branch). In every other
// block a copy is queued and lands only when its thread waits for its group,
// so a thread reading shared memory before the wait and the barrier that
// publish it sees stale bytes; in the others it lands at once, so a copy
// issued into a buffer other warps are still reading corrupts their result.
inline bool eager_copies = false;  // set per block by launch()
inline bool eager_odd_blocks = true;  // which blocks land at once: tests run a kernel both ways

inline void land(const AsyncCopy& c) {
  std::memcpy(c.dst, c.src, c.src_bytes);
  std::memset(static_cast<unsigned char*>(c.dst) + c.src_bytes, 0, c.bytes - c.src_bytes);
}

inline void async_copy(void* dst, const void* src, size_t bytes, size_t src_bytes) {
  if (reinterpret_cast<uintptr_t>(dst) % bytes != 0 || (src_bytes > 0 && reinterpret_cast<uintptr_t>(src) % bytes != 0))
    fail("misaligned cp.async");
  if (eager_copies) land({dst, src, bytes, src_bytes});
  else current->open_group.push_back({dst, src, bytes, src_bytes});
}
inline void async_commit() {
  current->pending_groups.push_back(std::move(current->open_group));
  current->open_group.clear();
}
inline void async_wait(size_t most_pending) {
  auto& groups = current->pending_groups;
  while (groups.size() > most_pending) {
    for (const AsyncCopy& c : groups.front()) land(c);
    groups.erase(groups.begin());
  }
}

template <class T>
constexpr bool shuffleable = std::is_arithmetic_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

}  // namespace emu

inline void emu::Barrier::wait() {
  if (++arrived == count) {  // the last thread to arrive releases the others
    arrived = 0;
    ++gen;
    return;
  }
  Fiber* f = current;
  f->waiting = this;
  f->wait_gen = gen;
  swapcontext(&f->ctx, &scheduler);
}

#define threadIdx emu::tid
#define blockIdx emu::bid
inline dim3 blockDim, gridDim;
inline void __syncthreads() { emu::block_bar->wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { emu::warp_bar->wait(); }
inline void __threadfence() {}
inline void __threadfence_block() {}
inline unsigned __activemask() { return 0xffffffffu; }

template <class T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
  static_assert(emu::shuffleable<T>);
  return emu::exchange(mask, v, [&](unsigned lane) {
    return static_cast<int>(lane / width * width + static_cast<unsigned>(src_lane) % width);
  }, "__shfl_sync");
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  static_assert(emu::shuffleable<T>);
  return emu::exchange(mask, v, [&](unsigned lane) {
    return lane % width + delta < static_cast<unsigned>(width) ? static_cast<int>(lane + delta) : -1;
  }, "__shfl_down_sync");
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  static_assert(emu::shuffleable<T>);
  return emu::exchange(mask, v, [&](unsigned lane) {
    return lane % width >= delta ? static_cast<int>(lane - delta) : -1;
  }, "__shfl_up_sync");
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  static_assert(emu::shuffleable<T>);
  return emu::exchange(mask, v, [&](unsigned lane) {
    const unsigned src = lane ^ static_cast<unsigned>(lane_mask);
    return src / width > lane / width ? -1 : static_cast<int>(src);  // later groups: own value
  }, "__shfl_xor_sync");
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
  unsigned bits = 0;
  for (int src = 0; src < 32; ++src) {
    bits |= (emu::exchange(mask, pred != 0, [&](unsigned) { return src; }, "__ballot_sync") ? 1u : 0u) << src;
  }
  return bits;
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) == 0xffffffffu; }

// ---- atomics: one OS thread, so plain read-modify-writes
template <class T>
T atomicAdd(T* p, T v) {
  const T old = *p;
  if constexpr (std::is_same_v<T, __half>) *p = __float2half_rn(__half2float(old) + __half2float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) *p = __float2bfloat16_rn(__bfloat162float(old) + __bfloat162float(v));
  else *p = old + v;
  return old;
}
inline float4 atomicAdd(float4* p, float4 v) {  // sm_90's vector atomic; needs 16-byte alignment
  if (reinterpret_cast<uintptr_t>(p) % 16 != 0) emu::fail("misaligned float4 atomicAdd");
  const float4 old = *p;
  p->x += v.x, p->y += v.y, p->z += v.z, p->w += v.w;
  return old;
}
template <class T> T atomicMax(T* p, T v) { const T old = *p; if (v > old) *p = v; return old; }
template <class T> T atomicMin(T* p, T v) { const T old = *p; if (v < old) *p = v; return old; }
template <class T> T atomicExch(T* p, T v) { const T old = *p; *p = v; return old; }
template <class T> T atomicCAS(T* p, T cmp, T v) { const T old = *p; if (old == cmp) *p = v; return old; }
template <class T> T atomicOr(T* p, T v) { const T old = *p; *p = old | v; return old; }
template <class T> T atomicAnd(T* p, T v) { const T old = *p; *p = old & v; return old; }
template <class T> T __ldg(const T* p) { return *p; }

// ---- nvcuda::wmma
namespace nvcuda::wmma {
struct matrix_a {}; struct matrix_b {}; struct accumulator {}; struct row_major {}; struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment { float x[256]; };
template <class F> void fill_fragment(F& f, float v) { for (float& e : f.x) e = v; }
template <class Use, class T, class Layout>
void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout>& f, const T* p, unsigned ldm) {
  if (reinterpret_cast<uintptr_t>(p) % 32 != 0 || ldm % 8 != 0) emu::fail("misaligned wmma load");
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
  if (reinterpret_cast<uintptr_t>(p) % 32 != 0 || ldm % 4 != 0) emu::fail("misaligned wmma store");
  if (emu::lane_id() != 0) return;  // one lane writes: readers need a __syncwarp
  for (int r = 0; r < 16; ++r) for (int c = 0; c < 16; ++c) p[r * ldm + c] = f.x[r * 16 + c];
}
}  // namespace nvcuda::wmma

// ---- launch
// Runs kernel over `grid` blocks of `block` threads with `smem` bytes of
// dynamic shared memory, as described at the top.
template <class F>
void launch(dim3 grid, dim3 block, size_t smem, F kernel) {
  const unsigned threads = block.x * block.y * block.z;
  const uint64_t blocks = uint64_t{grid.x} * grid.y * grid.z;
  if (threads == 0 || threads > 1024 || block.z > 64) emu::fail("invalid block size");
  if (grid.y > 65535 || grid.z > 65535 || blocks == 0) emu::fail("invalid grid size");
  if (blocks > 100000) emu::fail("grid too large for the emulation: use a smaller case");
  gridDim = grid;
  blockDim = block;
  emu::kernel = kernel;
  std::vector<unsigned char> buf(smem + 256);
  unsigned char* base = buf.data() + (256 - reinterpret_cast<uintptr_t>(buf.data()) % 256);
  std::vector<emu::Fiber> fibers(threads);
  for (unsigned t = 0; t < threads; ++t) {
    fibers[t].stack = emu::stack_for(t);
    fibers[t].linear = t;
    fibers[t].tid = dim3(t % block.x, t / block.x % block.y, t / (block.x * block.y));
  }
  const unsigned warps = (threads + 31) / 32;
  std::vector<uint64_t> block_order(blocks);
  for (uint64_t b = 0; b < blocks; ++b) block_order[b] = b;
  std::mt19937 rng(static_cast<unsigned>(blocks * 7919 + threads));
  std::shuffle(block_order.begin(), block_order.end(), rng);  // blocks run in no fixed order
  alignas(16) static unsigned char xch[32 * 32 * emu::kSlot];
  for (uint64_t b : block_order) {
    std::memset(base, 0xAB, smem);  // garbage, like real shared memory (0xABAB is a finite bfloat16)
    emu::Barrier block_barrier(static_cast<int>(threads));
    std::vector<emu::Barrier> warp_barriers;
    for (unsigned w = 0; w < warps; ++w) warp_barriers.emplace_back(static_cast<int>(std::min(32u, threads - w * 32)));
    for (emu::Fiber& f : fibers) {
      f.done = false;
      f.waiting = nullptr;
      f.open_group.clear();
      f.pending_groups.clear();
      getcontext(&f.ctx);
      f.ctx.uc_stack.ss_sp = f.stack;
      f.ctx.uc_stack.ss_size = emu::kStackBytes;
      f.ctx.uc_link = &emu::scheduler;
      makecontext(&f.ctx, emu::entry, 0);
    }
    emu::bid = dim3(static_cast<unsigned>(b % grid.x), static_cast<unsigned>(b / grid.x % grid.y),
                    static_cast<unsigned>(b / (uint64_t{grid.x} * grid.y)));
    emu::block_bar = &block_barrier;
    emu::eager_copies = (b % 2 == 1) == emu::eager_odd_blocks;
    emu::smem_ptr = base;
    std::vector<unsigned> order(threads);
    for (unsigned t = 0; t < threads; ++t) order[t] = t;
    // One thread of the block lags: it runs only when no other can, so the
    // rest of the block races as far ahead of it as the barriers allow.
    const unsigned laggard = static_cast<unsigned>(rng() % threads);
    auto runnable = [&](unsigned t) {
      const emu::Fiber& f = fibers[t];
      return !f.done && (f.waiting == nullptr || f.waiting->gen != f.wait_gen);
    };
    auto run = [&](unsigned t) {
      emu::Fiber& f = fibers[t];
      f.waiting = nullptr;
      emu::current = &f;
      emu::tid = f.tid;
      emu::warp_bar = &warp_barriers[t / 32];
      emu::warp_lanes = static_cast<unsigned>(warp_barriers[t / 32].count);
      emu::warp_xch = xch + (t / 32) * 32 * emu::kSlot;
      swapcontext(&emu::scheduler, &f.ctx);
    };
    for (;;) {
      bool progress = false;
      std::shuffle(order.begin(), order.end(), rng);  // no thread order may be relied upon
      for (unsigned t : order) {
        if (t == laggard || !runnable(t)) continue;
        run(t);
        progress = true;
      }
      if (progress) continue;
      if (runnable(laggard)) {
        run(laggard);
        continue;
      }
      bool all_done = true;
      for (const emu::Fiber& f : fibers) all_done = all_done && f.done;
      if (all_done) break;
      std::printf("cuda_emulation: block (%u, %u, %u) deadlocked: some threads wait at a barrier others never reach\n",
                  emu::bid.x, emu::bid.y, emu::bid.z);
      std::fflush(stdout);
      std::abort();
    }
  }
}
