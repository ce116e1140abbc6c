// The index family's gather / scatter kernel (cuda/device/index_kernels.cuh)
// runs on the CPU through tests/cpp/cuda_emulation.h, driven as
// cuda/index.cu's run_index() drives it (merged layout, one or kMaxIndices
// index slots, 32- or 64-bit offsets, a grid-stride loop over fewer blocks
// than elements), against ember's CPU kernels (core/cpu/index.h): gather
// along a dim and with two advanced indices over permuted and flipped
// layouts, scatter with distinct targets, and accumulate with duplicate and
// negative indices in every dtype CUDA accumulates.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include <ember/core/cpu/index.h>
#include <ember/core/ops/factory.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"
#include "cuda_emulation.h"

#include <ember/cuda/device/index_kernels.cuh>

namespace {

using namespace emu_test;
namespace kc = ember::cuda;
using ember::Dims;
using ember::Strides;

// cuda/index.cu's run_index() / launch_index(): op over plain's shape;
// `indexed` is the operand the indices address.
template <class Op>
void emulated_index(const Tensor& plain, const Tensor& indexed, const std::vector<Tensor>& indices,
                    const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes, const Op& op,
                    bool force_int64 = false) {
  const int64_t n = plain.numel();
  std::vector<Strides> strides{plain.strides(), indexed.strides()};
  std::vector<const int64_t*> data;
  for (const Tensor& t : indices) {
    REQUIRE(t.shape() == plain.shape());
    strides.push_back(t.strides());
    data.push_back(t.data<int64_t>());
  }
  const kc::IndexLayout l = kc::coalesce(plain.shape(), strides);
  const bool narrow = kc::fits_int32(l, n) && !force_int64;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 127) / 128, 3));  // grid-stride: fewer blocks
  auto run = [&](auto tag) {
    constexpr int N = decltype(tag)::value;
    const kc::IndexGeometry<N> g = kc::make_geometry<N>(l, data, index_strides, sizes);
    if (narrow) launch(blocks, 128, 0, [&] { kc::index_kernel<N, int32_t, Op>(g, n, op); });
    else launch(blocks, 128, 0, [&] { kc::index_kernel<N, int64_t, Op>(g, n, op); });
  };
  if (indices.size() <= 1) run(std::integral_constant<int, 1>{});
  else run(std::integral_constant<int, kc::kMaxIndices>{});
}

// v (row-major over `shape`) as a view whose buffer stores the dims in a
// random order, one dim possibly reversed (a negative stride).
Tensor scrambled(const std::vector<double>& v, const Shape& shape, DType dtype, std::mt19937& rng) {
  Dims order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  Dims back(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) back[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  const Tensor logical = tensor_of(v, shape, dtype);
  if (rng() % 2) {
    const Dims flip{static_cast<int64_t>(rng() % shape.size())};
    return logical.flip(flip).permute(order).contiguous().permute(back).flip(flip);
  }
  return logical.permute(order).contiguous().permute(back);
}

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<double> small_ints(int64_t n, int lo, int hi, std::mt19937& rng) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = std::uniform_int_distribution<int>(lo, hi)(rng);
  return v;
}

// Unsigned integer of the element's size: gather and scatter move bits.
template <class F>
void with_bits(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: REQUIRE(itemsize == 8); return f(uint64_t{});
  }
}

template <class F>
void with_accumulate_type(DType d, F&& f) {
  switch (d) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Float16: return f(__half{});
    case DType::BFloat16: return f(__nv_bfloat16{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Int8: return f(int8_t{});
    case DType::UInt8: return f(uint8_t{});
    default: REQUIRE(d == DType::Bool); return f(bool{});
  }
}

// gather(src, d, index): out has index's shape; src restrided with stride 0 along d.
void gather_case(const Shape& src_shape, int64_t d, int64_t m, DType dtype, unsigned seed, bool force_int64 = false) {
  INFO("gather src " << ember::shape_str(src_shape) << " dim " << d << " m " << m << " dtype " << ember::dtype_name(dtype));
  std::mt19937 rng(seed);
  const Tensor src = scrambled(small_ints(numel_of(src_shape), -50, 50, rng), src_shape, dtype, rng);
  Shape shape = src_shape;
  shape[d] = m;
  const int64_t size = src_shape[d];
  const Tensor index = scrambled(small_ints(numel_of(shape), static_cast<int>(-size), static_cast<int>(size - 1), rng),
                                 shape, DType::Int64, rng);
  Strides s = src.strides();
  s[d] = 0;
  const Tensor view = ember::make_view(src, shape, s, src.storage_offset());
  Tensor want = nan_tensor(shape, dtype), got = nan_tensor(shape, dtype);
  ember::cpu::index_gather(want, view, {index}, {src.stride(d)}, {size});
  with_bits(got.element_size(), [&](auto tag) {
    using U = decltype(tag);
    emulated_index(got, view, {index}, {src.stride(d)}, {size},
                   kc::GatherOp<U>{static_cast<U*>(got.data_ptr()), static_cast<const U*>(view.data_ptr())},
                   force_int64);
  });
  require_close(values_of(got), values_of(want), 0, 0, "gather");
}

// x[i0, i1] for x of shape [A, B, C]: iteration shape [K, C], two index slots.
void advanced_gather_case(int64_t A, int64_t B, int64_t C, int64_t K, DType dtype, unsigned seed) {
  INFO("advanced gather A " << A << " B " << B << " C " << C << " K " << K);
  std::mt19937 rng(seed);
  const Tensor src = scrambled(small_ints(A * B * C, -50, 50, rng), {A, B, C}, dtype, rng);
  const Tensor i0 = tensor_of(small_ints(K, static_cast<int>(-A), static_cast<int>(A - 1), rng), {K}, DType::Int64);
  const Tensor i1 = tensor_of(small_ints(K, static_cast<int>(-B), static_cast<int>(B - 1), rng), {K}, DType::Int64);
  const Shape shape{K, C};
  const Tensor view = ember::make_view(src, shape, {0, src.stride(2)}, src.storage_offset());
  const Tensor e0 = ember::make_view(i0, shape, {1, 0}, 0), e1 = ember::make_view(i1, shape, {1, 0}, 0);
  Tensor want = nan_tensor(shape, dtype), got = nan_tensor(shape, dtype);
  const std::vector<int64_t> istr{src.stride(0), src.stride(1)}, sizes{A, B};
  ember::cpu::index_gather(want, view, {e0, e1}, istr, sizes);
  with_bits(got.element_size(), [&](auto tag) {
    using U = decltype(tag);
    emulated_index(got, view, {e0, e1}, istr, sizes,
                   kc::GatherOp<U>{static_cast<U*>(got.data_ptr()), static_cast<const U*>(view.data_ptr())});
  });
  require_close(values_of(got), values_of(want), 0, 0, "advanced gather");
}

// dst[index[i, j], j] (+)= values[i, j] for dst [A, B] and values [m, B].
// Without accumulate the targets of a column are distinct (a permutation);
// with it they repeat.
void scatter_case(int64_t A, int64_t B, int64_t m, DType dtype, bool accumulate, unsigned seed) {
  INFO("scatter A " << A << " B " << B << " m " << m << " dtype " << ember::dtype_name(dtype) << " accumulate "
                    << accumulate);
  std::mt19937 rng(seed);
  const bool is_bool = dtype == DType::Bool;
  const std::vector<double> init = small_ints(A * B, is_bool ? 0 : -20, is_bool ? 1 : 20, rng);
  const Tensor values = scrambled(small_ints(m * B, is_bool ? 0 : -3, is_bool ? 1 : 3, rng), {m, B}, dtype, rng);
  std::vector<double> idx(static_cast<size_t>(m * B));
  for (int64_t j = 0; j < B; ++j) {
    std::vector<int64_t> rows(static_cast<size_t>(A));
    std::iota(rows.begin(), rows.end(), 0);
    std::shuffle(rows.begin(), rows.end(), rng);
    for (int64_t i = 0; i < m; ++i) {
      int64_t r = accumulate ? static_cast<int64_t>(rng() % std::min<int64_t>(A, 3)) : rows[i];
      if (rng() % 2) r -= A;  // negative indices wrap
      idx[i * B + j] = static_cast<double>(r);
    }
  }
  const Tensor index = scrambled(idx, {m, B}, DType::Int64, rng);
  auto run = [&](bool emulated) {
    Tensor dst = scrambled(init, {A, B}, dtype, rng);
    const Tensor view = ember::make_view(dst, {m, B}, {0, dst.stride(1)}, dst.storage_offset());
    if (!emulated) {
      Tensor v = view;
      ember::cpu::index_scatter(v, values, {index}, {dst.stride(0)}, {A}, accumulate);
    } else if (!accumulate) {
      with_bits(dst.element_size(), [&](auto tag) {
        using U = decltype(tag);
        emulated_index(values, view, {index}, {dst.stride(0)}, {A},
                       kc::ScatterOp<U>{static_cast<U*>(view.data_ptr()), static_cast<const U*>(values.data_ptr())});
      });
    } else {
      with_accumulate_type(dtype, [&](auto tag) {
        using T = decltype(tag);
        emulated_index(values, view, {index}, {dst.stride(0)}, {A},
                       kc::AddOp<T>{static_cast<T*>(view.data_ptr()), static_cast<const T*>(values.data_ptr())});
      });
    }
    return values_of(dst);
  };
  const unsigned layout_seed = static_cast<unsigned>(rng());
  rng.seed(layout_seed);
  const std::vector<double> want = run(false);
  rng.seed(layout_seed);  // the same dst layout for both
  const std::vector<double> got = run(true);
  // Small integers: every partial sum is exact, so any order of the atomics agrees.
  require_close(got, want, 0, 0, accumulate ? "scatter accumulate" : "scatter");
}

}  // namespace

TEST_CASE("index gather kernel (host emulation) against the CPU kernel", "[emulation]") {
  gather_case({5, 7, 3}, 1, 4, DType::Float32, 1);
  gather_case({6, 4, 9}, 0, 11, DType::Float16, 2);
  gather_case({3, 8, 5}, 2, 2, DType::Int64, 3);
  gather_case({4, 5, 6}, 2, 6, DType::Bool, 4);
  gather_case({4, 1, 37}, 2, 50, DType::Float64, 5);  // a size-1 dim merged away
  gather_case({5, 7, 3}, 0, 9, DType::BFloat16, 6, /*force_int64=*/true);
  advanced_gather_case(5, 6, 7, 9, DType::Float32, 7);
  advanced_gather_case(3, 4, 1, 40, DType::Int32, 8);
}

TEST_CASE("index scatter kernels (host emulation): plain and accumulate with duplicates", "[emulation]") {
  scatter_case(7, 5, 4, DType::Float32, false, 11);
  scatter_case(9, 3, 9, DType::Float16, false, 12);
  scatter_case(6, 4, 6, DType::Int64, false, 13);
  const DType all[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32,
                       DType::Int64,   DType::Int8,    DType::UInt8,    DType::Bool};
  unsigned seed = 20;
  for (DType d : all) scatter_case(5, 6, 40, d, true, seed++);
}
