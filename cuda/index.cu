// The index family on the GPU (contracts in cuda/index.h):
// - index_gather / index_scatter: one thread per element of the iteration
//   shape; the operands' offsets come from the merged sizes and strides
//   (cuda/index_layout.h, shared with the host tests), in 32-bit arithmetic
//   when every offset fits, and each index tensor adds its wrapped value
//   times the indexed dim's stride. Plain copies move
//   elements as 1/2/4/8-byte words; accumulate uses atomicAdd (a
//   compare-and-swap loop on the enclosing word for 8-bit integers).
//   With ember.use_deterministic_algorithms(True), accumulate instead records
//   each value's destination offset, sorts them stably and lets one thread add
//   each run of equal offsets in element order (cuda/device/deterministic_kernels.cuh).
// - min_max (range checks, one_hot): a two-pass block reduction whose two
//   values are read back to the host.
// - nonzero: per-tile counts, their prefix sum (ember::cumsum), then an
//   in-tile scan that writes each element's coordinates at its row-major rank.
// - tril_triu: one thread per output element (cuda/device/index_kernels.cuh).
#include <ember/cuda/index.h>

#include <cstdint>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <ember/core/determinism.h>
#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/factory.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/sort.h>
#include <ember/cuda/context.h>
#include <ember/cuda/device/deterministic_kernels.cuh>
#include <ember/cuda/device/index_kernels.cuh>
#include <ember/cuda/device/index_scan_kernels.cuh>
#include <ember/cuda/device/loops.cuh>
#include <ember/cuda/error.h>
#include <ember/cuda/index_layout.h>

namespace ember::cuda {

namespace {

// kThreads, kMaxDims and the grid size of grid-stride loops come from the
// elementwise launcher; the index kernels' addressing from index_layout.h.
using detail::blocks_for;
static_assert(kCoordsMaxDims == kMaxDims, "nonzero's coordinates cover every dimension the launcher does");

// ---- index_gather / index_scatter (kernel and ops in cuda/device/index_kernels.cuh) -------------

struct IndexArgs {
  const std::vector<Tensor>& indices;
  const std::vector<int64_t>& index_strides;
  const std::vector<int64_t>& sizes;
};

template <int N, class Op>
void launch_index(const IndexLayout& l, const IndexArgs& a, int64_t n, const Op& op, cudaStream_t stream) {
  std::vector<const int64_t*> data;
  for (const Tensor& t : a.indices) data.push_back(static_cast<const int64_t*>(t.data_ptr()));
  const IndexGeometry<N> g = make_geometry<N>(l, data, a.index_strides, a.sizes);
  if (fits_int32(l, n)) {
    index_kernel<N, int32_t, Op><<<blocks_for(n), kThreads, 0, stream>>>(g, n, op);
  } else {
    index_kernel<N, int64_t, Op><<<blocks_for(n), kThreads, 0, stream>>>(g, n, op);
  }
  EMBER_CUDA_KERNEL_CHECK();
}

// Runs op over `plain`'s shape; `indexed` is the operand the indices address.
template <class Op>
void run_index(const Tensor& plain, const Tensor& indexed, const IndexArgs& a, const Op& op, const char* what) {
  const Shape& shape = plain.shape();
  const int64_t n = plain.numel();
  if (n == 0) return;
  EMBER_CHECK(a.indices.size() == a.index_strides.size() && a.indices.size() == a.sizes.size(), Error, what,
              ": got ", a.indices.size(), " indices but ", a.index_strides.size(), " strides and ", a.sizes.size(),
              " sizes");
  EMBER_CHECK(static_cast<int>(a.indices.size()) <= kMaxIndices, NotImplementedError, what, ": at most ", kMaxIndices,
              " index tensors are supported on CUDA, got ", a.indices.size());
  std::vector<const Tensor*> ops{&plain, &indexed};
  for (const Tensor& t : a.indices) ops.push_back(&t);
  std::vector<Strides> strides;
  for (const Tensor* t : ops) {
    strides.push_back(t->strides());
    EMBER_CHECK(t->shape() == shape, Error, what, ": every operand must have the iteration shape ",
                shape_str(shape), ", got ", shape_str(t->shape()));
    EMBER_CHECK(t->device() == plain.device(), Error, what, ": every operand must be on ", plain.device().str(),
                ", got one on ", t->device().str());
  }
  for (const Tensor& t : a.indices) {
    EMBER_CHECK(t.dtype() == DType::Int64, Error, what, ": expected int64 indices, got ", dtype_name(t.dtype()));
  }
  const IndexLayout l = coalesce(shape, strides);
  EMBER_CHECK(static_cast<int>(l.shape.size()) <= kIndexMaxDims, NotImplementedError, what, ": at most ",
              kIndexMaxDims, " dimensions are supported on CUDA, got ", l.shape.size(), " (after merging)");
  const int device = plain.device().index;
  DeviceGuard guard(device);
  cudaStream_t stream = current_cuda_stream(device);
  if (a.indices.size() <= 1) launch_index<1>(l, a, n, op, stream);
  else launch_index<kMaxIndices>(l, a, n, op, stream);
}

// 16 bytes (a complex128 element), moved as one aligned unit.
struct alignas(16) Bits16 {
  uint64_t lo, hi;
};

// Calls f(U{}) with U a plain type of the element size (plain moves).
template <class F>
void dispatch_bits(size_t itemsize, const char* what, F&& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    case 16: return f(Bits16{});
  }
  throw Error(str(what, ": unsupported element size ", itemsize));
}

template <class F>
void dispatch_accumulate(DType d, const char* op, F&& f) {
  switch (d) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(__half{});
    case DType::BFloat16: return f(__nv_bfloat16{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Int8: return f(int8_t{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Bool: return f(bool{});
  }
  throw NotImplementedError(str(op, ": accumulating into ", dtype_name(d), " tensors is not implemented on CUDA"));
}

// dst[offset of value i] += value i without atomics: the offsets of the
// (contiguous) values, a stable sort of them, then one thread per run of
// equal offsets adds its values in element order.
template <class T>
void deterministic_accumulate(const Tensor& dst, const Tensor& values_in, const IndexArgs& a, const char* op) {
  const Tensor values = values_in.contiguous();  // plain offset == element number
  const int64_t n = values.numel();
  if (n == 0) return;
  Tensor offsets = ember::empty(values.shape(), DType::Int64, values.device());
  run_index(values, dst, a, RecordOffsetOp{static_cast<int64_t*>(offsets.data_ptr())}, op);
  const auto [keys, order] = ember::sort(offsets.reshape({n}), 0, /*descending=*/false, /*stable=*/true);
  const Tensor k = keys.contiguous(), o = order.contiguous();
  const int device = dst.device().index;
  DeviceGuard guard(device);
  run_sum_kernel<T><<<blocks_for(n), kThreads, 0, current_cuda_stream(device)>>>(
      static_cast<T*>(dst.data_ptr()), static_cast<const T*>(values.data_ptr()),
      static_cast<const int64_t*>(k.data_ptr()), static_cast<const int64_t*>(o.data_ptr()), n);
  EMBER_CUDA_KERNEL_CHECK();
}

// x as contiguous 0/1 bytes: nonzero means != 0 (NaN counts, -0.0 does not).
Tensor nonzero_flags(const Tensor& x) {
  const Tensor t = x.detach();
  if (t.dtype() == DType::Bool) return t.contiguous();
  return ember::ne(t, ember::zeros({}, t.dtype(), t.device())).contiguous();
}

struct Tiles {
  Tensor flags;   // contiguous bool
  Tensor counts;  // int64 [tiles]: nonzeros per tile
  Tensor ends;    // int64 [tiles]: their inclusive prefix sum
  int64_t total = 0;
};

Tiles count_tiles(const Tensor& x) {
  Tiles r;
  const int64_t n = x.numel();
  if (n == 0) return r;
  r.flags = nonzero_flags(x);
  const int64_t tiles = (n + kTile - 1) / kTile;
  r.counts = ember::empty({tiles}, DType::Int64, x.device());
  count_tiles_kernel<<<static_cast<unsigned>(tiles), kScanThreads, 0, current_cuda_stream(x.device().index)>>>(
      static_cast<const uint8_t*>(r.flags.data_ptr()), n, static_cast<int64_t*>(r.counts.data_ptr()));
  EMBER_CUDA_KERNEL_CHECK();
  r.ends = ember::cumsum(r.counts, 0).contiguous();
  // The count decides the result's size: read back (a synchronization, as in PyTorch).
  const Tensor last = r.ends.narrow(0, tiles - 1, 1).to(kCPU);
  r.total = static_cast<const int64_t*>(last.data_ptr())[0];
  return r;
}

}  // namespace

void index_gather(Tensor& out, const Tensor& src, const std::vector<Tensor>& indices,
                  const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes) {
  EMBER_CHECK(out.dtype() == src.dtype(), Error, "index_gather: out (", dtype_name(out.dtype()), ") and src (",
              dtype_name(src.dtype()), ") must have one dtype");
  const IndexArgs a{indices, index_strides, sizes};
  dispatch_bits(out.element_size(), "index_gather", [&](auto tag) {
    using U = decltype(tag);
    run_index(out, src, a, GatherOp<U>{static_cast<U*>(out.data_ptr()), static_cast<const U*>(src.data_ptr())},
              "index_gather");
  });
}

void index_scatter(Tensor& dst, const Tensor& values, const std::vector<Tensor>& indices,
                   const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes, bool accumulate,
                   const char* op) {
  EMBER_CHECK(dst.dtype() == values.dtype(), Error, op, ": the destination (", dtype_name(dst.dtype()),
              ") and the values (", dtype_name(values.dtype()), ") must have one dtype");
  const IndexArgs a{indices, index_strides, sizes};
  if (!accumulate) {
    dispatch_bits(dst.element_size(), op, [&](auto tag) {
      using U = decltype(tag);
      run_index(values, dst, a,
                ScatterOp<U>{static_cast<U*>(dst.data_ptr()), static_cast<const U*>(values.data_ptr())}, op);
    });
    return;
  }
  dispatch_accumulate(dst.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    if (deterministic_algorithms()) return deterministic_accumulate<T>(dst, values, a, op);
    run_index(values, dst, a, AddOp<T>{static_cast<T*>(dst.data_ptr()), static_cast<const T*>(values.data_ptr())}, op);
  });
}

std::pair<int64_t, int64_t> min_max(const Tensor& index) {
  EMBER_CHECK(index.dtype() == DType::Int64 && index.numel() > 0, Error,
              "min_max: expected a non-empty int64 tensor, got ", dtype_name(index.dtype()), " of shape ",
              shape_str(index.shape()));
  const Tensor x = index.contiguous();
  const int64_t n = x.numel();
  const int device = x.device().index;
  DeviceGuard guard(device);
  cudaStream_t stream = current_cuda_stream(device);
  const int64_t b = (n + kScanThreads - 1) / kScanThreads;
  const int blocks = static_cast<int>(b < kMinMaxBlocks ? b : kMinMaxBlocks);
  Tensor scratch = ember::empty({2 * blocks + 2}, DType::Int64, x.device());
  int64_t* s = static_cast<int64_t*>(scratch.data_ptr());
  const int64_t* p = static_cast<const int64_t*>(x.data_ptr());
  min_max_kernel<<<blocks, kScanThreads, 0, stream>>>(p, p, n, s, s + blocks);
  EMBER_CUDA_KERNEL_CHECK();
  min_max_kernel<<<1, kScanThreads, 0, stream>>>(s, s + blocks, blocks, s + 2 * blocks, s + 2 * blocks + 1);
  EMBER_CUDA_KERNEL_CHECK();
  const Tensor host = scratch.narrow(0, 2 * blocks, 2).to(kCPU);  // waits for the stream
  const int64_t* h = static_cast<const int64_t*>(host.data_ptr());
  return {h[0], h[1]};
}

void check_index_range(const Tensor& index, int64_t size, int64_t dim, const char* op, bool allow_negative,
                       cpu::RangeError kind) {
  if (index.numel() == 0) return;
  // One synchronization per check: PyTorch asserts on the device instead,
  // but ember raises the CPU's Python exception with the bad value.
  const auto [lo, hi] = min_max(index);
  if (lo >= (allow_negative ? -size : 0) && hi < size) return;
  // Out of range: the CPU check on a host copy names the first bad value in
  // the CPU's order and raises its error.
  cpu::check_index_range(index.to(kCPU), size, dim, op, allow_negative, kind);
  throw Error(str(op, ": index out of bounds for dimension ", dim, " with size ", size));  // not reached
}

int64_t count_nonzero(const Tensor& x) {
  DeviceGuard guard(x.device().index);
  return count_tiles(x).total;
}

Tensor nonzero(const Tensor& x) {
  EMBER_CHECK(x.dim() <= kMaxDims, NotImplementedError, "nonzero: at most ", kMaxDims,
              " dimensions are supported on CUDA, got ", x.dim());
  const int device = x.device().index;
  DeviceGuard guard(device);
  const Tiles t = count_tiles(x);
  Tensor out = ember::empty({t.total, x.dim()}, DType::Int64, x.device());
  if (t.total == 0 || x.dim() == 0) return out;
  Coords g{};
  g.ndim = static_cast<int>(x.dim());
  for (int d = 0; d < g.ndim; ++d) g.shape[d] = x.size(d);
  const int64_t n = x.numel();
  write_nonzero_kernel<<<static_cast<unsigned>(t.counts.numel()), kScanThreads, 0, current_cuda_stream(device)>>>(
      static_cast<const uint8_t*>(t.flags.data_ptr()), n, static_cast<const int64_t*>(t.counts.data_ptr()),
      static_cast<const int64_t*>(t.ends.data_ptr()), g, static_cast<int64_t*>(out.data_ptr()));
  EMBER_CUDA_KERNEL_CHECK();
  return out;
}

void tril_triu(Tensor& out, const Tensor& x, int64_t diagonal, bool lower) {
  const char* name = lower ? "tril" : "triu";
  const int64_t nd = x.dim();
  EMBER_CHECK(nd >= 2 && nd - 2 <= kTriMaxBatchDims, NotImplementedError, name, ": expected 2 to ",
              kTriMaxBatchDims + 2, " dimensions on CUDA, got ", nd);
  EMBER_CHECK(out.is_contiguous() && out.shape() == x.shape() && out.dtype() == x.dtype(), Error, name,
              ": expected a contiguous output of the input's shape and dtype");
  const int64_t n = out.numel();
  if (n == 0) return;
  const TriGeometry g = tri_geometry(x.shape(), x.strides());
  const int device = x.device().index;
  DeviceGuard guard(device);
  dispatch_bits(x.element_size(), name, [&](auto tag) {
    using U = decltype(tag);
    tril_triu_kernel<U><<<blocks_for(n), kThreads, 0, current_cuda_stream(device)>>>(
        static_cast<U*>(out.data_ptr()), static_cast<const U*>(x.data_ptr()), g, n, diagonal, lower);
    EMBER_CUDA_KERNEL_CHECK();
  });
}

}  // namespace ember::cuda
