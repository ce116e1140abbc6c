// The reduction kernels (cuda/reduce.cu launches them): folds (sum, mean,
// prod, max/min, all/any) over the middle axis of a contiguous
// [outer, reduced, inner] block, one block of kReduceThreads threads per
// output column, or, for long columns with few outputs, a first pass over
// chunks of each column writing partials and a second pass folding them
// (fold_plan decides); var/std, logsumexp and p-norms accumulated in double;
// argmax/argmin; prod's backward; cumsum. Device code only (and the plan), in
// a header so that tests/cpp/test_reduce_emulation.cpp runs the same source
// on the CPU (tests/cpp/cuda_emulation.h).
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include <ember/cuda/device/block_reduce.cuh>
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

template <class A> struct SumFold {
  __device__ static A identity() { return A(0); }
  __device__ static A combine(A a, A b) { return a + b; }
};
template <class A> struct ProdFold {
  __device__ static A identity() { return A(1); }
  __device__ static A combine(A a, A b) { return a * b; }
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

// Folds x[o, r, i] for r in each chunk of `chunk` elements; column c = o*inner + i.
// final: out[c] = acc * scale as O; else partial[c * chunks + part] = acc.
template <class T, class A, class O, class Fold>
__global__ void fold_kernel(const T* x, O* out, A* partial, int64_t columns, int64_t reduced, int64_t inner,
                            int64_t chunk, int64_t chunks, bool final_pass, double scale) {
  for (int64_t b = blockIdx.x; b < columns * chunks; b += gridDim.x) {
    const int64_t c = b / chunks, part = b % chunks;
    const int64_t o = c / inner, i = c % inner;
    const int64_t begin = part * chunk;
    const int64_t end = begin + chunk < reduced ? begin + chunk : reduced;
    const T* p = x + o * reduced * inner + i;
    A acc = Fold::identity();
    for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x) acc = Fold::combine(acc, static_cast<A>(p[r * inner]));
    acc = block_fold<A, Fold>(acc);
    if (threadIdx.x == 0) {
      if (!final_pass) {
        partial[c * chunks + part] = acc;
      } else if constexpr (std::is_floating_point_v<A>) {
        out[c] = static_cast<O>(scale == 1.0 ? acc : static_cast<A>(acc * scale));
      } else {
        out[c] = static_cast<O>(acc);
      }
    }
  }
}

// ---- statistics: one block per column, accumulating in double as the CPU does.

template <class T>
__global__ void var_kernel(const T* x, T* out, int64_t columns, int64_t reduced, int64_t inner, double denom,
                           bool take_sqrt) {
  for (int64_t c = blockIdx.x; c < columns; c += gridDim.x) {
    const T* p = x + (c / inner) * reduced * inner + c % inner;
    double s = 0;
    for (int64_t r = threadIdx.x; r < reduced; r += blockDim.x) s += static_cast<double>(p[r * inner]);
    const double mean = block_fold<double, SumFold<double>>(s) / static_cast<double>(reduced);
    double sq = 0;
    for (int64_t r = threadIdx.x; r < reduced; r += blockDim.x) {
      const double d = static_cast<double>(p[r * inner]) - mean;
      sq += d * d;
    }
    sq = block_fold<double, SumFold<double>>(sq);
    if (threadIdx.x == 0) {
      const double v = sq / denom;
      out[c] = static_cast<T>(take_sqrt ? ::sqrt(v) : v);
    }
  }
}

template <class T>
__global__ void logsumexp_kernel(const T* x, T* out, int64_t columns, int64_t reduced, int64_t inner) {
  for (int64_t c = blockIdx.x; c < columns; c += gridDim.x) {
    const T* p = x + (c / inner) * reduced * inner + c % inner;
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t r = threadIdx.x; r < reduced; r += blockDim.x) {
      m = ExtremeFold<double, true>::combine(m, static_cast<double>(p[r * inner]));
    }
    m = block_fold<double, ExtremeFold<double, true>>(m);
    if (m != m || ::isinf(m)) {  // NaN, all -inf, or a +inf: no shift makes them finite
      if (threadIdx.x == 0) out[c] = static_cast<T>(m);
      continue;
    }
    double s = 0;
    for (int64_t r = threadIdx.x; r < reduced; r += blockDim.x) s += ::exp(static_cast<double>(p[r * inner]) - m);
    s = block_fold<double, SumFold<double>>(s);
    if (threadIdx.x == 0) out[c] = static_cast<T>(m + ::log(s));
  }
}

// p-norm of each column, accumulated in double: +-inf: max/min of |x| (NaN
// propagates); 0: the count of non-zeros; else (sum |x|^p)^(1/p).
template <class T>
__global__ void norm_kernel(const T* x, T* out, int64_t columns, int64_t reduced, int64_t inner, double p) {
  const bool is_inf = ::isinf(p);
  const bool is_max = p > 0;
  for (int64_t c = blockIdx.x; c < columns; c += gridDim.x) {
    const T* q = x + (c / inner) * reduced * inner + c % inner;
    double acc;
    if (is_inf) {
      acc = is_max ? 0.0 : std::numeric_limits<double>::infinity();
      for (int64_t r = threadIdx.x; r < reduced; r += blockDim.x) {
        const double a = ::fabs(static_cast<double>(q[r * inner]));
        acc = is_max ? ExtremeFold<double, true>::combine(acc, a) : ExtremeFold<double, false>::combine(acc, a);
      }
      acc = is_max ? block_fold<double, ExtremeFold<double, true>>(acc)
                   : block_fold<double, ExtremeFold<double, false>>(acc);
    } else {
      acc = 0;
      for (int64_t r = threadIdx.x; r < reduced; r += blockDim.x) {
        const double v = static_cast<double>(q[r * inner]);
        acc += p == 2 ? v * v : p == 1 ? ::fabs(v) : p == 0 ? (v != 0.0 ? 1.0 : 0.0) : ::pow(::fabs(v), p);
      }
      acc = block_fold<double, SumFold<double>>(acc);
      if (p == 2) acc = ::sqrt(acc);
      else if (p != 1 && p != 0) acc = ::pow(acc, 1.0 / p);
    }
    if (threadIdx.x == 0) out[c] = static_cast<T>(acc);
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

// One thread per column scans it in order (columns are independent).
template <class T, class A>
__global__ void cumsum_kernel(const T* x, T* out, int64_t columns, int64_t length, int64_t inner) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t base = (c / inner) * length * inner + c % inner;
    A acc = 0;
    for (int64_t r = 0; r < length; ++r) {
      acc += static_cast<A>(x[base + r * inner]);
      out[base + r * inner] = static_cast<T>(acc);
    }
  }
}

}  // namespace
}  // namespace ember::cuda
