// The reduction kernels (cuda/reduce.cu launches them): folds (sum, mean,
// prod, max/min, all/any) over the middle axis of a contiguous
// [outer, reduced, inner] block, one block of kReduceThreads threads per
// output column, or, for long columns with few outputs, a first pass over
// chunks of each column writing partials and a second pass folding them
// (fold_plan decides); when inner is wide, tiles of adjacent columns read row
// by row (tile_plan); var/std, logsumexp and p-norms accumulated in double,
// split the same way (per-chunk (count, mean, M2), (max, sum of exp) or
// partial sums, merged by a second pass); argmax/argmin; prod's backward;
// cumsum (cumsum_plan: a thread per column, a block-wide scan per column, or
// chunk sums then a block-wide scan per chunk). Device code only (and the
// plans), in a header so that tests/cpp/test_reduce_emulation.cpp runs the
// same source on the CPU (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include <ember/core/int_math.h>
#include <ember/cuda/device/block_reduce.cuh>
#include <ember/cuda/device/dtypes.cuh>
#include <ember/cuda/device/math.cuh>

namespace ember::cuda {
namespace {  // one copy per including file (the .cu, or its emulation test)

constexpr int kReduceThreads = 256;

// How fold() cuts each column: `chunks` parts of `chunk` elements (the last
// may be shorter); chunks > 1 means two passes through a partials buffer.
struct FoldPlan {
  int64_t chunks, chunk;
};
inline FoldPlan fold_plan(int64_t columns, int64_t reduced) {
  int64_t chunks = 1;
  if (columns < 512 && reduced > 8192) {
    chunks = (reduced + 4095) / 4096;
    const int64_t cap = 1024 / columns > 1 ? 1024 / columns : 1;
    chunks = chunks < cap ? chunks : cap;
  }
  const int64_t chunk = (reduced + chunks - 1) / chunks;
  return {chunks, chunk > 0 ? chunk : 1};
}

// Integer sums and products wrap around (core/int_math.h), as on the CPU.
template <class A> struct SumFold {
  __device__ static A identity() { return A(0); }
  __device__ static A combine(A a, A b) { return int_math::wrapping_add(a, b); }
};
template <class A> struct ProdFold {
  __device__ static A identity() { return A(1); }
  __device__ static A combine(A a, A b) { return int_math::wrapping_mul(a, b); }
};
// NaN-propagating max/min: a NaN anywhere makes the result NaN.
template <class A, bool IsMax> struct ExtremeFold {
  __device__ static A identity() {
    if constexpr (std::is_floating_point_v<A>) {
      return IsMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    } else {
      return IsMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
    }
  }
  __device__ static A combine(A a, A b) {
    if (dmath::is_nan(a)) return a;
    if (dmath::is_nan(b)) return b;
    return (IsMax ? b > a : b < a) ? b : a;
  }
};
template <bool IsAll> struct LogicalFold {
  __device__ static bool identity() { return IsAll; }
  __device__ static bool combine(bool a, bool b) { return IsAll ? (a && b) : (a || b); }
};

// Block-wide fold of one value per thread (cuda/device/block_reduce.cuh);
// every thread gets the result.
template <class Fold>
struct FoldOp {
  template <class A>
  __device__ A operator()(A a, A b) const { return Fold::combine(a, b); }
};

template <class A, class Fold>
__device__ A block_fold(A v) {
  __shared__ A shared[kReduceThreads / kWarpSize];
  return block_reduce(v, FoldOp<Fold>{}, shared);
}

// Bounds of chunk `part` of a column of `reduced` elements.
struct ChunkRange {
  int64_t begin, end;
};
__device__ inline ChunkRange chunk_range(int64_t part, int64_t chunk, int64_t reduced) {
  const int64_t begin = part * chunk < reduced ? part * chunk : reduced;
  return {begin, begin + chunk < reduced ? begin + chunk : reduced};
}

// A column's folded value as the output type; a mean's scale applied in A.
template <class O, class A>
__device__ O fold_result(A acc, double scale) {
  if constexpr (std::is_floating_point_v<A>) {
    return static_cast<O>(scale == 1.0 ? acc : static_cast<A>(acc * scale));
  } else {
    return static_cast<O>(acc);
  }
}

// Folds x[o, r, i] for r in each chunk of `chunk` elements; column c = o*inner + i.
// T may be a 16-bit float (a sum or mean read as it is, A = float).
// final: out[c] = acc * scale as O; else partial[c * chunks + part] = acc.
template <class T, class A, class O, class Fold>
__global__ void fold_kernel(const T* x, O* out, A* partial, int64_t columns, int64_t reduced, int64_t inner,
                            int64_t chunk, int64_t chunks, bool final_pass, double scale) {
  for (int64_t b = blockIdx.x; b < columns * chunks; b += gridDim.x) {
    const int64_t c = b / chunks, part = b % chunks;
    const int64_t o = c / inner, i = c % inner;
    const ChunkRange k = chunk_range(part, chunk, reduced);
    const T* p = x + o * reduced * inner + i;
    A acc = Fold::identity();
    for (int64_t r = k.begin + threadIdx.x; r < k.end; r += blockDim.x) {
      acc = Fold::combine(acc, static_cast<A>(widen(p[r * inner])));
    }
    acc = block_fold<A, Fold>(acc);
    if (threadIdx.x == 0) {
      if (final_pass) out[c] = fold_result<O>(acc, scale);
      else partial[c * chunks + part] = acc;
    }
  }
}

// ---- column folds. When the reduced axis is not the innermost one (a bias
// gradient: the sum of a [batch, features] block over the batch), fold_kernel's
// threads would read one column each `inner` elements apart: a memory
// transaction per element. Here a block takes a tile of kTileColumns adjacent
// columns and reads kTileRows rows of it at a time, so a warp's loads are one
// contiguous run; long columns are cut into chunks (tile_plan) so that the
// blocks fill the GPU, and a second pass folds the chunks' partials in order
// (no atomics: deterministic).
constexpr int kTileColumns = 32;
constexpr int kTileRows = kReduceThreads / kTileColumns;
constexpr int64_t kTileMinInner = 16;  // narrower: fold_kernel's strided reads waste less than idle lanes

struct TilePlan {
  int64_t tiles, chunks, chunk;
};
constexpr int64_t kTileLongestChunk = 4096;  // rows: at most 512 additions in a row per thread
// About 1024 blocks in all (8 per SM on 128 SMs), no chunk under 256 rows,
// and none over kTileLongestChunk, so that a long float32 sum is not one
// long sequential sum per thread.
inline TilePlan tile_plan(int64_t outer, int64_t reduced, int64_t inner) {
  const int64_t tiles = (inner + kTileColumns - 1) / kTileColumns;
  const int64_t blocks = outer * tiles;
  int64_t chunks = blocks >= 1024 ? 1 : 1024 / blocks;
  const int64_t most = reduced / 256, least = (reduced + kTileLongestChunk - 1) / kTileLongestChunk;
  chunks = chunks < most ? chunks : most;
  chunks = chunks > least ? chunks : least;
  chunks = chunks > 1 ? chunks : 1;
  const int64_t chunk = (reduced + chunks - 1) / chunks;
  return {tiles, chunks, chunk > 0 ? chunk : 1};
}

// Block (kTileColumns, kTileRows) b folds chunk b % chunks of tile b / chunks
// (tile t of outer index o: b / chunks = o * tiles + t). With partial null it
// writes out[o * inner + i]; else partial[(o * chunks + part) * inner + i],
// an [outer, chunks, inner] block the second pass folds over its middle axis.
template <class T, class A, class O, class Fold>
__global__ void fold_tile_kernel(const T* x, O* out, A* partial, int64_t outer, int64_t reduced, int64_t inner,
                                 int64_t tiles, int64_t chunk, int64_t chunks, double scale) {
  __shared__ A rows[kTileRows][kTileColumns];
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t b = blockIdx.x; b < outer * tiles * chunks; b += gridDim.x) {
    const int64_t part = b % chunks, o = b / chunks / tiles;
    const int64_t i = b / chunks % tiles * kTileColumns + tx;
    A acc = Fold::identity();
    if (i < inner) {
      const ChunkRange k = chunk_range(part, chunk, reduced);
      const T* p = x + o * reduced * inner + i;
      for (int64_t r = k.begin + ty; r < k.end; r += kTileRows) {
        acc = Fold::combine(acc, static_cast<A>(widen(p[r * inner])));
      }
    }
    rows[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && i < inner) {
      for (int y = 1; y < kTileRows; ++y) acc = Fold::combine(acc, rows[y][tx]);
      if (partial == nullptr) out[o * inner + i] = fold_result<O>(acc, scale);
      else partial[(o * chunks + part) * inner + i] = acc;
    }
    __syncthreads();  // the next tile reuses rows
  }
}

// ---- statistics, accumulated in double as the CPU does. Each kernel folds
// chunk `part` of column c = b / chunks (block b of columns * chunks, as
// fold_kernel). With partial == nullptr (chunks == 1) it writes the result;
// else a per-chunk partial that a second pass combines (one block per column,
// partials in chunk order, so the result is deterministic): for long columns
// with few outputs (a full var, norm or logsumexp; fold_plan decides).

// Two passes over the chunk (its mean, then squared deviations from it).
// Partials: partial[3 * (c * chunks + part) + {0, 1, 2}] = (count, mean, M2).
template <class T>
__global__ void var_kernel(const T* x, T* out, double* partial, int64_t columns, int64_t reduced, int64_t inner,
                           int64_t chunk, int64_t chunks, double denom, bool take_sqrt) {
  for (int64_t b = blockIdx.x; b < columns * chunks; b += gridDim.x) {
    const int64_t c = b / chunks, part = b % chunks;
    const ChunkRange k = chunk_range(part, chunk, reduced);
    const T* p = x + (c / inner) * reduced * inner + c % inner;
    double s = 0;
    for (int64_t r = k.begin + threadIdx.x; r < k.end; r += blockDim.x) s += static_cast<double>(p[r * inner]);
    const double count = static_cast<double>(k.end - k.begin);
    s = block_fold<double, SumFold<double>>(s);
    const double mean = partial != nullptr && count == 0 ? 0.0 : s / count;
    double sq = 0;
    for (int64_t r = k.begin + threadIdx.x; r < k.end; r += blockDim.x) {
      const double d = static_cast<double>(p[r * inner]) - mean;
      sq += d * d;
    }
    sq = block_fold<double, SumFold<double>>(sq);
    if (threadIdx.x == 0) {
      if (partial != nullptr) {
        double* q = partial + 3 * (c * chunks + part);
        q[0] = count, q[1] = mean, q[2] = sq;
      } else {
        const double v = sq / denom;
        out[c] = static_cast<T>(take_sqrt ? ::sqrt(v) : v);
      }
    }
  }
}

// Second pass of var: the column's mean from the chunks' (count, mean), then
// M2 = sum of the chunks' M2 + count * (chunk mean - mean)^2: the CPU's
// two-pass formula, exact up to rounding.
template <class T>
__global__ void var_merge_kernel(const double* partial, T* out, int64_t columns, int64_t chunks, double denom,
                                 bool take_sqrt) {
  for (int64_t c = blockIdx.x; c < columns; c += gridDim.x) {
    const double* q = partial + 3 * c * chunks;
    double n = 0, s = 0;
    for (int64_t k = threadIdx.x; k < chunks; k += blockDim.x) {
      n += q[3 * k];
      s += q[3 * k] * q[3 * k + 1];
    }
    n = block_fold<double, SumFold<double>>(n);
    const double mean = block_fold<double, SumFold<double>>(s) / n;
    double m2 = 0;
    for (int64_t k = threadIdx.x; k < chunks; k += blockDim.x) {
      const double d = q[3 * k + 1] - mean;
      m2 += q[3 * k + 2] + q[3 * k] * (d * d);
    }
    m2 = block_fold<double, SumFold<double>>(m2);
    if (threadIdx.x == 0) {
      const double v = m2 / denom;
      out[c] = static_cast<T>(take_sqrt ? ::sqrt(v) : v);
    }
  }
}

// log(sum weight * exp(x)) with weight 1 when `weight` is null; weight, when
// given, is laid out as x. The max m of the chunk (NaN propagates), then
// s = sum weight * exp(x - m); a NaN or infinite m is the answer by itself
// (NaN, all -inf, or a +inf) and gives s = 0. Partials: part_m[i], part_s[i]
// (i = c * chunks + part); the second pass runs this kernel over them as
// x = part_m, weight = part_s (so the merge rescales each s by exp(m - max)).
template <class T, class O>
__global__ void logsumexp_kernel(const T* x, const double* weight, O* out, double* part_m, double* part_s,
                                 int64_t columns, int64_t reduced, int64_t inner, int64_t chunk, int64_t chunks) {
  for (int64_t b = blockIdx.x; b < columns * chunks; b += gridDim.x) {
    const int64_t c = b / chunks, part = b % chunks;
    const ChunkRange k = chunk_range(part, chunk, reduced);
    const int64_t offset = (c / inner) * reduced * inner + c % inner;
    const T* p = x + offset;
    const double* w = weight != nullptr ? weight + offset : nullptr;
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t r = k.begin + threadIdx.x; r < k.end; r += blockDim.x) {
      m = ExtremeFold<double, true>::combine(m, static_cast<double>(p[r * inner]));
    }
    m = block_fold<double, ExtremeFold<double, true>>(m);
    const bool special = m != m || ::isinf(m);  // the same in every thread
    double s = 0;
    if (!special) {
      for (int64_t r = k.begin + threadIdx.x; r < k.end; r += blockDim.x) {
        const double e = ::exp(static_cast<double>(p[r * inner]) - m);
        s += w != nullptr ? w[r * inner] * e : e;
      }
      s = block_fold<double, SumFold<double>>(s);
    }
    if (threadIdx.x == 0) {
      if (part_m != nullptr) {
        part_m[c * chunks + part] = m;
        part_s[c * chunks + part] = s;
      } else {
        out[c] = static_cast<O>(special ? m : m + ::log(s));
      }
    }
  }
}

// p-norm of each column, accumulated in double: +-inf: max/min of |x| (NaN
// propagates); 0: the count of non-zeros; else (sum |x|^p)^(1/p). Partials:
// the chunk's max/min of |x|, or its sum of terms before the root; the second
// pass runs this kernel over them with `terms` true (each element is a term
// already; |partial| is the partial for +-inf).
template <class T, class O>
__global__ void norm_kernel(const T* x, O* out, double* partial, int64_t columns, int64_t reduced, int64_t inner,
                            int64_t chunk, int64_t chunks, double p, bool terms) {
  const bool is_inf = ::isinf(p);
  const bool is_max = p > 0;
  for (int64_t b = blockIdx.x; b < columns * chunks; b += gridDim.x) {
    const int64_t c = b / chunks, part = b % chunks;
    const ChunkRange k = chunk_range(part, chunk, reduced);
    const T* q = x + (c / inner) * reduced * inner + c % inner;
    double acc;
    if (is_inf) {
      acc = is_max ? 0.0 : std::numeric_limits<double>::infinity();
      for (int64_t r = k.begin + threadIdx.x; r < k.end; r += blockDim.x) {
        const double a = ::fabs(static_cast<double>(q[r * inner]));
        acc = is_max ? ExtremeFold<double, true>::combine(acc, a) : ExtremeFold<double, false>::combine(acc, a);
      }
      acc = is_max ? block_fold<double, ExtremeFold<double, true>>(acc)
                   : block_fold<double, ExtremeFold<double, false>>(acc);
    } else {
      acc = 0;
      for (int64_t r = k.begin + threadIdx.x; r < k.end; r += blockDim.x) {
        const double v = static_cast<double>(q[r * inner]);
        acc += terms  ? v
               : p == 2 ? v * v
               : p == 1 ? ::fabs(v)
               : p == 0 ? (v != 0.0 ? 1.0 : 0.0)
                        : ::pow(::fabs(v), p);
      }
      acc = block_fold<double, SumFold<double>>(acc);
      if (partial == nullptr) {
        if (p == 2) acc = ::sqrt(acc);
        else if (p != 1 && p != 0) acc = ::pow(acc, 1.0 / p);
      }
    }
    if (threadIdx.x == 0) {
      if (partial != nullptr) partial[c * chunks + part] = acc;
      else out[c] = static_cast<O>(acc);
    }
  }
}

// Product of the other elements of each column: exclusive prefix products
// times exclusive suffix products (no division, so zeros are exact). One
// thread per column.
template <class T>
__global__ void prod_others_kernel(const T* x, T* out, int64_t columns, int64_t reduced, int64_t inner) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * reduced * inner + c % inner;
    double acc = 1;
    for (int64_t r = 0; r < reduced; ++r) {
      out[base + r * inner] = static_cast<T>(acc);
      acc *= static_cast<double>(x[base + r * inner]);
    }
    acc = 1;
    for (int64_t r = reduced - 1; r >= 0; --r) {
      out[base + r * inner] = static_cast<T>(out[base + r * inner] * acc);
      acc *= static_cast<double>(x[base + r * inner]);
    }
  }
}

// (value, index) pairs: the first NaN wins, then the extreme, ties to the lower index.
template <class T, bool IsMax>
struct ArgBest {
  T v;
  int64_t i;
};
template <class T, bool IsMax>
__device__ inline ArgBest<T, IsMax> arg_combine(ArgBest<T, IsMax> a, ArgBest<T, IsMax> b) {
  if (b.i < 0) return a;
  if (a.i < 0) return b;
  const bool an = dmath::is_nan(a.v), bn = dmath::is_nan(b.v);
  if (an || bn) return (an && bn) ? (a.i < b.i ? a : b) : (an ? a : b);
  if (a.v == b.v) return a.i < b.i ? a : b;
  return (IsMax ? b.v > a.v : b.v < a.v) ? b : a;
}

// Moves a (value, index) pair between lanes for block_reduce.
template <class T, bool IsMax>
__device__ ArgBest<T, IsMax> shfl_down(ArgBest<T, IsMax> a, int offset) {
  return {::ember::cuda::shfl_down<T>(a.v, offset), ::ember::cuda::shfl_down<int64_t>(a.i, offset)};
}

struct ArgOp {
  template <class T, bool IsMax>
  __device__ ArgBest<T, IsMax> operator()(ArgBest<T, IsMax> a, ArgBest<T, IsMax> b) const {
    return arg_combine(a, b);
  }
};

template <class T, bool IsMax>
__global__ void arg_kernel(const T* x, T* values, int64_t* indices, int64_t columns, int64_t reduced,
                           int64_t inner) {
  __shared__ ArgBest<T, IsMax> shared[kReduceThreads / kWarpSize];
  for (int64_t c = blockIdx.x; c < columns; c += gridDim.x) {
    const T* p = x + (c / inner) * reduced * inner + c % inner;
    ArgBest<T, IsMax> best{T(0), -1};
    for (int64_t r = threadIdx.x; r < reduced; r += blockDim.x) best = arg_combine(best, ArgBest<T, IsMax>{p[r * inner], r});
    best = block_reduce(best, ArgOp{}, shared);
    if (threadIdx.x == 0) {
      indices[c] = best.i;
      if (values) values[c] = best.v;
    }
  }
}

// ---- cumsum: three ways, cumsum_plan picks one (cuda/reduce.cu and the
// emulation test call it). Accumulates in A (double for floats, int64 for
// integers) as the CPU does; integer results are exact, float ones differ
// from the CPU's sequential sum only by the order of the double additions.

// How cumsum runs: serial: one thread per column scans it in order (short
// columns, or many columns: enough threads to fill the GPU, and with
// inner > 1 neighbouring threads read neighbouring elements); else one block
// per chunk of `chunk` elements of a column (chunks == 1: a block per column),
// scanning tiles of kReduceThreads * kCumsumItems elements with a running
// carry; chunks > 1 first sums every chunk (fold_kernel's partials), and each
// chunk's block starts from the sum of the chunks before it.
struct ScanPlan {
  bool serial;
  int64_t chunks, chunk;
};
inline ScanPlan cumsum_plan(int64_t columns, int64_t length, int64_t inner) {
  const bool many = columns > 16384 && (inner > 1 || length < 512);
  if (length < 64 || many) return {true, 1, length};
  const FoldPlan f = fold_plan(columns, length);
  return {false, f.chunks, f.chunk};
}

constexpr int kCumsumItems = 8;  // consecutive elements per thread in a tile

template <class T, class A>
__global__ void cumsum_kernel(const T* x, T* out, int64_t columns, int64_t length, int64_t inner) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * length * inner + c % inner;
    A acc = 0;
    for (int64_t r = 0; r < length; ++r) {
      acc = int_math::wrapping_add(acc, static_cast<A>(x[base + r * inner]));
      out[base + r * inner] = static_cast<T>(acc);
    }
  }
}

// Exclusive prefix sum of one value per thread over the block (warp shuffles,
// then the warps' totals through `warp_totals`); `total` gets the block's sum,
// the same in every thread. Ends with a barrier so warp_totals can be reused.
template <class A>
__device__ A block_exclusive_sum(A v, A* warp_totals, A& total) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  A inclusive = v;
  for (int d = 1; d < kWarpSize; d *= 2) {
    const A up = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive = int_math::wrapping_add(inclusive, up);
  }
  A exclusive = __shfl_up_sync(0xffffffffu, inclusive, 1);
  if (lane == 0) exclusive = A(0);
  if (lane == kWarpSize - 1) warp_totals[warp] = inclusive;
  __syncthreads();
  A before = 0;
  total = 0;
  const int warps = blockDim.x / kWarpSize;
  for (int w = 0; w < warps; ++w) {
    if (w < warp) before = int_math::wrapping_add(before, warp_totals[w]);
    total = int_math::wrapping_add(total, warp_totals[w]);
  }
  __syncthreads();
  return int_math::wrapping_add(before, exclusive);
}

// Block b scans chunk b % chunks of column b / chunks; `chunk_sums` (null when
// chunks == 1) holds every chunk's sum, [columns, chunks]. Each thread takes
// kCumsumItems consecutive elements of a tile.
template <class T, class A>
__global__ void cumsum_block_kernel(const T* x, T* out, const A* chunk_sums, int64_t columns, int64_t length,
                                    int64_t inner, int64_t chunk, int64_t chunks) {
  __shared__ A warp_totals[kMaxWarps];
  const int64_t tile = static_cast<int64_t>(blockDim.x) * kCumsumItems;
  for (int64_t b = blockIdx.x; b < columns * chunks; b += gridDim.x) {
    const int64_t c = b / chunks, part = b % chunks;
    const ChunkRange k = chunk_range(part, chunk, length);
    const int64_t base = (c / inner) * length * inner + c % inner;
    A carry = 0;
    if (chunk_sums != nullptr) {  // the sum of the chunks before this one
      A s = 0;
      for (int64_t j = threadIdx.x; j < part; j += blockDim.x) {
        s = int_math::wrapping_add(s, chunk_sums[c * chunks + j]);
      }
      carry = block_fold<A, SumFold<A>>(s);
    }
    for (int64_t start = k.begin; start < k.end; start += tile) {
      const int64_t first = start + static_cast<int64_t>(threadIdx.x) * kCumsumItems;
      A run[kCumsumItems];
      A acc = 0;
      for (int j = 0; j < kCumsumItems; ++j) {
        if (first + j < k.end) acc = int_math::wrapping_add(acc, static_cast<A>(x[base + (first + j) * inner]));
        run[j] = acc;
      }
      A total;
      const A before = int_math::wrapping_add(carry, block_exclusive_sum(acc, warp_totals, total));
      for (int j = 0; j < kCumsumItems; ++j) {
        if (first + j < k.end) out[base + (first + j) * inner] = static_cast<T>(int_math::wrapping_add(before, run[j]));
      }
      carry = int_math::wrapping_add(carry, total);
    }
  }
}

}  // namespace
}  // namespace ember::cuda
