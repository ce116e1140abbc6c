// CUDA reductions over a contiguous [outer, reduced, inner] block. One block
// of threads reduces one output column (o, i) (grid-stride over columns),
// combining in shared memory; folds over a wide inner axis (inner >= 16)
// take tiles of adjacent columns instead, so that loads are contiguous. When
// there are few columns and many elements each (a full sum, or a
// clip_grad_norm_ over a large gradient), a first pass
// splits every column into chunks, each block writing a partial accumulator,
// and a second pass folds the partials: no atomics, so results are
// deterministic. var/std, norm and logsumexp split the same way (their
// partials are in double). cumsum scans a column per block (or chunks of it,
// each starting from the sum of the chunks before) unless there are many
// short columns. 16-bit inputs arrive only for sum and mean (read as they
// are, accumulated in float32); the front-end converts them to float32 for
// every other op. float32 accumulates in float and float64 in double (cumsum,
// var, norm and logsumexp: in double); integers in int64, wrapping around on
// overflow as on the CPU.
// The kernels and the plans choosing a path are in
// cuda/device/reduce_kernels.cuh; this file launches them.
#include <ember/cuda/reduce.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include <ember/core/error.h>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/device/math.cuh>
#include <ember/cuda/device/reduce_kernels.cuh>

namespace ember::cuda {

namespace {

int grid_for(int64_t blocks) { return static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535); }

// Wide inner axes: tiles of adjacent columns, chunked when they are too few
// to fill the GPU, then a pass over the chunks' partials.
template <class T, class A, class O, class Fold>
void fold_tiles(const Tensor& x, Tensor& out, int64_t outer, int64_t reduced, int64_t inner, double scale,
                cudaStream_t stream) {
  const TilePlan plan = tile_plan(outer, reduced, inner);
  const dim3 block(kTileColumns, kTileRows);
  if (plan.chunks == 1) {
    fold_tile_kernel<T, A, O, Fold><<<grid_for(outer * plan.tiles), block, 0, stream>>>(
        x.data<T>(), out.data<O>(), nullptr, outer, reduced, inner, plan.tiles, plan.chunk, 1, scale);
    EMBER_CUDA_KERNEL_CHECK();
    return;
  }
  Tensor partial = empty({outer, plan.chunks, inner}, dtype_of<A>::value, x.device());
  fold_tile_kernel<T, A, O, Fold><<<grid_for(outer * plan.tiles * plan.chunks), block, 0, stream>>>(
      x.data<T>(), out.data<O>(), partial.data<A>(), outer, reduced, inner, plan.tiles, plan.chunk, plan.chunks, scale);
  EMBER_CUDA_KERNEL_CHECK();
  fold_tile_kernel<A, A, O, Fold><<<grid_for(outer * plan.tiles), block, 0, stream>>>(
      partial.data<A>(), out.data<O>(), nullptr, outer, plan.chunks, inner, plan.tiles, plan.chunks, 1, scale);
  EMBER_CUDA_KERNEL_CHECK();
}

// Runs Fold over the middle axis; splits long columns when there are few.
template <class T, class A, class O, class Fold>
void fold(const Tensor& x, Tensor& out, int64_t outer, int64_t reduced, int64_t inner, double scale) {
  cudaStream_t stream = current_cuda_stream();
  const int64_t columns = outer * inner;
  if (columns == 0) return;
  if (inner >= kTileMinInner) return fold_tiles<T, A, O, Fold>(x, out, outer, reduced, inner, scale, stream);
  const FoldPlan plan = fold_plan(columns, reduced);
  const int64_t chunks = plan.chunks, chunk = plan.chunk;
  if (chunks == 1) {
    fold_kernel<T, A, O, Fold><<<grid_for(columns), kReduceThreads, 0, stream>>>(
        x.data<T>(), out.data<O>(), nullptr, columns, reduced, inner, chunk, 1, true, scale);
    EMBER_CUDA_KERNEL_CHECK();
    return;
  }
  Tensor partial = empty({columns, chunks}, dtype_of<A>::value, x.device());
  fold_kernel<T, A, O, Fold><<<grid_for(columns * chunks), kReduceThreads, 0, stream>>>(
      x.data<T>(), out.data<O>(), partial.data<A>(), columns, reduced, inner, chunk, chunks, false, scale);
  EMBER_CUDA_KERNEL_CHECK();
  // Partials are [columns, chunks]: outer = columns, reduced = chunks, inner = 1.
  fold_kernel<A, A, O, Fold><<<grid_for(columns), kReduceThreads, 0, stream>>>(
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

// A sum or mean of a 16-bit input (core/ops/reduce.cpp passes it as it is):
// read in its own type, accumulated and written in float32.
void reduce_half(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  EMBER_CHECK((op == ReduceOp::Sum || op == ReduceOp::Mean) && out.dtype() == DType::Float32, Error,
              "reduce: a ", dtype_name(x.dtype()), " input takes only sum or mean into float32 on CUDA");
  const double scale = op == ReduceOp::Mean ? 1.0 / static_cast<double>(reduced) : 1.0;
  dispatch_device_float(x.dtype(), "reduce", [&](auto element) {
    using T = decltype(element);
    fold<T, float, float, SumFold<float>>(x, out, outer, reduced, inner, scale);
  });
}

void check_floating(const Tensor& x, const char* op) {
  EMBER_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, TypeError, op,
              ": expected a float32 or float64 input, got ", dtype_name(x.dtype()));
}

}  // namespace

void reduce(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  DeviceGuard guard(x.device().index);
  if (outer * inner == 0) return;
  if (is_half(x.dtype())) return reduce_half(op, out, x, outer, reduced, inner);
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
  const FoldPlan plan = fold_plan(columns, reduced);
  cudaStream_t stream = current_cuda_stream();
  dispatch_floating(x.dtype(), "var", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (plan.chunks == 1) {
      var_kernel<T><<<grid_for(columns), kReduceThreads, 0, stream>>>(x.data<T>(), out.data<T>(), nullptr, columns,
                                                                       reduced, inner, plan.chunk, 1, denom, take_sqrt);
      EMBER_CUDA_KERNEL_CHECK();
      return;
    }
    Tensor partial = empty({columns, plan.chunks, 3}, DType::Float64, x.device());
    var_kernel<T><<<grid_for(columns * plan.chunks), kReduceThreads, 0, stream>>>(
        x.data<T>(), out.data<T>(), partial.data<double>(), columns, reduced, inner, plan.chunk, plan.chunks, denom,
        take_sqrt);
    EMBER_CUDA_KERNEL_CHECK();
    var_merge_kernel<T><<<grid_for(columns), kReduceThreads, 0, stream>>>(partial.data<double>(), out.data<T>(),
                                                                           columns, plan.chunks, denom, take_sqrt);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void logsumexp(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner) {
  check_floating(x, "logsumexp");
  DeviceGuard guard(x.device().index);
  const int64_t columns = outer * inner;
  if (columns == 0) return;
  const FoldPlan plan = fold_plan(columns, reduced);
  cudaStream_t stream = current_cuda_stream();
  dispatch_floating(x.dtype(), "logsumexp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (plan.chunks == 1) {
      logsumexp_kernel<T, T><<<grid_for(columns), kReduceThreads, 0, stream>>>(
          x.data<T>(), nullptr, out.data<T>(), nullptr, nullptr, columns, reduced, inner, plan.chunk, 1);
      EMBER_CUDA_KERNEL_CHECK();
      return;
    }
    // [2, columns, chunks]: the chunks' maxima, then their sums of exp(x - max).
    Tensor partial = empty({2, columns, plan.chunks}, DType::Float64, x.device());
    double* part_m = partial.data<double>();
    double* part_s = part_m + columns * plan.chunks;
    logsumexp_kernel<T, T><<<grid_for(columns * plan.chunks), kReduceThreads, 0, stream>>>(
        x.data<T>(), nullptr, out.data<T>(), part_m, part_s, columns, reduced, inner, plan.chunk, plan.chunks);
    EMBER_CUDA_KERNEL_CHECK();
    logsumexp_kernel<double, T><<<grid_for(columns), kReduceThreads, 0, stream>>>(
        part_m, part_s, out.data<T>(), nullptr, nullptr, columns, plan.chunks, 1, plan.chunks, 1);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

void norm(Tensor& out, const Tensor& x, double p, int64_t outer, int64_t reduced, int64_t inner) {
  check_floating(x, "norm");
  DeviceGuard guard(x.device().index);
  const int64_t columns = outer * inner;
  if (columns == 0) return;
  const FoldPlan plan = fold_plan(columns, reduced);
  cudaStream_t stream = current_cuda_stream();
  dispatch_floating(x.dtype(), "norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (plan.chunks == 1) {
      norm_kernel<T, T><<<grid_for(columns), kReduceThreads, 0, stream>>>(
          x.data<T>(), out.data<T>(), nullptr, columns, reduced, inner, plan.chunk, 1, p, false);
      EMBER_CUDA_KERNEL_CHECK();
      return;
    }
    Tensor partial = empty({columns, plan.chunks}, DType::Float64, x.device());
    norm_kernel<T, T><<<grid_for(columns * plan.chunks), kReduceThreads, 0, stream>>>(
        x.data<T>(), out.data<T>(), partial.data<double>(), columns, reduced, inner, plan.chunk, plan.chunks, p, false);
    EMBER_CUDA_KERNEL_CHECK();
    norm_kernel<double, T><<<grid_for(columns), kReduceThreads, 0, stream>>>(
        partial.data<double>(), out.data<T>(), nullptr, columns, plan.chunks, 1, plan.chunks, 1, p, true);
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
    prod_others_kernel<T><<<grid_for((columns + kReduceThreads - 1) / kReduceThreads), kReduceThreads, 0, current_cuda_stream()>>>(
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
      arg_kernel<T, true><<<grid_for(columns), kReduceThreads, 0, stream>>>(x.data<T>(), vals, indices.data<int64_t>(),
                                                                    columns, reduced, inner);
    } else {
      arg_kernel<T, false><<<grid_for(columns), kReduceThreads, 0, stream>>>(x.data<T>(), vals, indices.data<int64_t>(),
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
      cudaStream_t stream = current_cuda_stream();
      const ScanPlan plan = cumsum_plan(columns, length, inner);
      if (plan.serial) {
        cumsum_kernel<T, A><<<grid_for((columns + kReduceThreads - 1) / kReduceThreads), kReduceThreads, 0, stream>>>(
            x.data<T>(), out.data<T>(), columns, length, inner);
      } else if (plan.chunks == 1) {
        cumsum_block_kernel<T, A><<<grid_for(columns), kReduceThreads, 0, stream>>>(
            x.data<T>(), out.data<T>(), nullptr, columns, length, inner, plan.chunk, 1);
      } else {
        // Every chunk's sum first (as a split sum's first pass), then the scans.
        Tensor chunk_sums = empty({columns, plan.chunks}, dtype_of<A>::value, x.device());
        fold_kernel<T, A, T, SumFold<A>><<<grid_for(columns * plan.chunks), kReduceThreads, 0, stream>>>(
            x.data<T>(), nullptr, chunk_sums.data<A>(), columns, length, inner, plan.chunk, plan.chunks, false, 1.0);
        EMBER_CUDA_KERNEL_CHECK();
        cumsum_block_kernel<T, A><<<grid_for(columns * plan.chunks), kReduceThreads, 0, stream>>>(
            x.data<T>(), out.data<T>(), chunk_sums.data<A>(), columns, length, inner, plan.chunk, plan.chunks);
      }
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
