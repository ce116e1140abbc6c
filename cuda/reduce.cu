// CUDA reductions over a contiguous [outer, reduced, inner] block. One block
// of threads reduces one output column (o, i) (grid-stride over columns),
// combining in shared memory. When there are few columns and many elements
// each (a full sum), a first pass splits every column into chunks, each
// block writing a partial accumulator, and a second pass folds the partials:
// no atomics, so results are deterministic. 16-bit inputs never arrive (the
// front-end converts them to float32), so float32 accumulates in float and
// float64 in double; integers in int64.
#include <ember/cuda/reduce.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/device/block_reduce.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/math.cuh>

namespace ember::cuda {

namespace {

constexpr int kBlock = 256;

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
  __shared__ A shared[kBlock / kWarpSize];
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

int grid_for(int64_t blocks) { return static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535); }

// Runs Fold over the middle axis; splits long columns when there are few.
template <class T, class A, class O, class Fold>
void fold(const Tensor& x, Tensor& out, int64_t outer, int64_t reduced, int64_t inner, double scale) {
  cudaStream_t stream = current_cuda_stream();
  const int64_t columns = outer * inner;
  if (columns == 0) return;
  int64_t chunks = 1;
  if (columns < 512 && reduced > 8192) {
    chunks = (reduced + 4095) / 4096;
    const int64_t cap = 1024 / columns > 1 ? 1024 / columns : 1;
    chunks = chunks < cap ? chunks : cap;
  }
  const int64_t chunk = (reduced + chunks - 1) / chunks;
  if (chunks == 1) {
    fold_kernel<T, A, O, Fold><<<grid_for(columns), kBlock, 0, stream>>>(
        x.data<T>(), out.data<O>(), nullptr, columns, reduced, inner, chunk > 0 ? chunk : 1, 1, true, scale);
    EMBER_CUDA_KERNEL_CHECK();
    return;
  }
  Tensor partial = empty({columns, chunks}, dtype_of<A>::value, x.device());
  fold_kernel<T, A, O, Fold><<<grid_for(columns * chunks), kBlock, 0, stream>>>(
      x.data<T>(), out.data<O>(), partial.data<A>(), columns, reduced, inner, chunk, chunks, false, scale);
  EMBER_CUDA_KERNEL_CHECK();
  // Partials are [columns, chunks]: outer = columns, reduced = chunks, inner = 1.
  fold_kernel<A, A, O, Fold><<<grid_for(columns), kBlock, 0, stream>>>(
      partial.data<A>(), out.data<O>(), nullptr, columns, chunks, 1, chunks, 1, true, scale);
  EMBER_CUDA_KERNEL_CHECK();
}

template <class T>
using IntAcc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

template <class T>
void reduce_typed(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  switch (op) {
    case ReduceOp::All: return fold<T, bool, bool, LogicalFold<true>>(x, out, outer, reduced, inner, 1.0);
    case ReduceOp::Any: return fold<T, bool, bool, LogicalFold<false>>(x, out, outer, reduced, inner, 1.0);
    case ReduceOp::Max: return fold<T, T, T, ExtremeFold<T, true>>(x, out, outer, reduced, inner, 1.0);
    case ReduceOp::Min: return fold<T, T, T, ExtremeFold<T, false>>(x, out, outer, reduced, inner, 1.0);
    default: break;
  }
  if constexpr (std::is_same_v<T, bool>) {
    throw TypeError("reduce: bool tensors are reduced as int64; convert first");
  } else {
    using A = IntAcc<T>;
    switch (op) {
      case ReduceOp::Sum: return fold<T, A, T, SumFold<A>>(x, out, outer, reduced, inner, 1.0);
      case ReduceOp::Mean:
        return fold<T, A, T, SumFold<A>>(x, out, outer, reduced, inner, 1.0 / static_cast<double>(reduced));
      case ReduceOp::Prod: return fold<T, A, T, ProdFold<A>>(x, out, outer, reduced, inner, 1.0);
      default: break;
    }
  }
  throw Error("reduce: unknown op");
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
  __shared__ ArgBest<T, IsMax> shared[kBlock / kWarpSize];
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

template <class T>
void grad_coeff_typed(GradCoeff kind, const TensorIterator& it, double p) {
  if constexpr (!std::is_floating_point_v<T>) {
    throw TypeError("grad_coeff: expected a floating point output");
  } else {
    switch (kind) {
      case GradCoeff::EqMask: return launch<T, T, T>(it, [] __device__(T u, T v) { return static_cast<T>(u == v); });
      case GradCoeff::AbsEqMask:
        return launch<T, T, T>(it, [] __device__(T u, T v) { return static_cast<T>(dmath::fabs(u) == v); });
      case GradCoeff::Sign:
        return launch<T, T, T>(it, [] __device__(T u, T) { return static_cast<T>((u > T(0)) - (u < T(0))); });
      case GradCoeff::NormPow:
        return launch<T, T, T>(it, [p] __device__(T u, T n) {
          if (n == T(0)) return T(0);
          const T sign = static_cast<T>((u > T(0)) - (u < T(0)));
          return static_cast<T>(sign * ::pow(::fabs(static_cast<double>(u)) / n, p - 1));
        });
    }
  }
}

void check_floating(const Tensor& x, const char* op) {
  EMBER_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, TypeError, op,
              ": expected a float32 or float64 input, got ", dtype_name(x.dtype()));
}

}  // namespace

void reduce(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  DeviceGuard guard(x.device().index);
  if (outer * inner == 0) return;
  dispatch_math(x.dtype(), "reduce", [&](auto tag) {
    reduce_typed<typename decltype(tag)::type>(op, out, x, outer, reduced, inner);
  });
}

void var(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner, double correction,
         bool take_sqrt) {
  check_floating(x, take_sqrt ? "std" : "var");
  DeviceGuard guard(x.device().index);
  const int64_t columns = outer * inner;
  if (columns == 0) return;
  const double n = static_cast<double>(reduced);
  const double denom = n - correction > 0.0 ? n - correction : 0.0;
  dispatch_floating(x.dtype(), "var", [&](auto tag) {
    using T = typename decltype(tag)::type;
    var_kernel<T><<<grid_for(columns), kBlock, 0, current_cuda_stream()>>>(x.data<T>(), out.data<T>(), columns,
                                                                            reduced, inner, denom, take_sqrt);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void logsumexp(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  check_floating(x, "logsumexp");
  DeviceGuard guard(x.device().index);
  const int64_t columns = outer * inner;
  if (columns == 0) return;
  dispatch_floating(x.dtype(), "logsumexp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    logsumexp_kernel<T><<<grid_for(columns), kBlock, 0, current_cuda_stream()>>>(x.data<T>(), out.data<T>(),
                                                                                  columns, reduced, inner);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void norm(Tensor& out, const Tensor& x, double p, int64_t outer, int64_t reduced, int64_t inner) {
  check_floating(x, "norm");
  DeviceGuard guard(x.device().index);
  const int64_t columns = outer * inner;
  if (columns == 0) return;
  dispatch_floating(x.dtype(), "norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    norm_kernel<T><<<grid_for(columns), kBlock, 0, current_cuda_stream()>>>(x.data<T>(), out.data<T>(), columns,
                                                                             reduced, inner, p);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void prod_others(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  EMBER_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, TypeError,
              "prod: backward needs a floating point input");
  DeviceGuard guard(x.device().index);
  const int64_t columns = outer * inner;
  if (columns == 0 || reduced == 0) return;
  dispatch_floating(x.dtype(), "prod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    prod_others_kernel<T><<<grid_for((columns + kBlock - 1) / kBlock), kBlock, 0, current_cuda_stream()>>>(
        x.data<T>(), out.data<T>(), columns, reduced, inner);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void arg_reduce(bool is_max, Tensor& values, Tensor& indices, const Tensor& x, int64_t outer, int64_t reduced,
                int64_t inner) {
  DeviceGuard guard(x.device().index);
  const int64_t columns = outer * inner;
  if (columns == 0) return;
  dispatch_math(x.dtype(), is_max ? "argmax" : "argmin", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* vals = values.defined() ? values.data<T>() : nullptr;
    cudaStream_t stream = current_cuda_stream();
    if (is_max) {
      arg_kernel<T, true><<<grid_for(columns), kBlock, 0, stream>>>(x.data<T>(), vals, indices.data<int64_t>(),
                                                                    columns, reduced, inner);
    } else {
      arg_kernel<T, false><<<grid_for(columns), kBlock, 0, stream>>>(x.data<T>(), vals, indices.data<int64_t>(),
                                                                     columns, reduced, inner);
    }
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void cumsum(Tensor& out, const Tensor& x, int64_t outer, int64_t length, int64_t inner) {
  DeviceGuard guard(x.device().index);
  const int64_t columns = outer * inner;
  if (columns == 0 || length == 0) return;
  dispatch_math(x.dtype(), "cumsum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      throw TypeError("cumsum: bool inputs are summed as int64; convert first");
    } else {
      using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
      cumsum_kernel<T, A><<<grid_for((columns + kBlock - 1) / kBlock), kBlock, 0, current_cuda_stream()>>>(
          x.data<T>(), out.data<T>(), columns, length, inner);
      EMBER_CUDA_KERNEL_CHECK();
    }
  });
}

void grad_coeff(GradCoeff kind, Tensor& out, const Tensor& a, const Tensor& b, double p) {
  DeviceGuard guard(out.device().index);
  TensorIterator it({out, a, b});
  dispatch_math(out.dtype(), "grad_coeff", [&](auto tag) { grad_coeff_typed<typename decltype(tag)::type>(kind, it, p); });
}

}  // namespace ember::cuda
