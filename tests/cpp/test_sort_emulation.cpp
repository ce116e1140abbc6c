// The sort kernels (cuda/device/sort_kernels.cuh) run on the CPU through
// tests/cpp/cuda_emulation.h against ember's CPU sort (core/cpu/sort.cpp),
// bit for bit: the bitonic kernel for rows that fit a block (lengths around
// the powers of two, up to kBitonicMaxRow, fewer blocks than rows), and the
// long-row path's kernels (keys, row keys, gather) with the two stable radix
// sorts CUB does between them done on the host. Every dtype the CUDA sort
// dispatches, ascending and descending, with ties, NaN, infinities, signed
// zeros and integer extremes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include <ember/core/cpu/sort.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/sort_kernels.cuh>

namespace {

using namespace emu_test;

template <class T> struct Of;
template <> struct Of<bool> { static constexpr DType dtype = DType::Bool; };
template <> struct Of<uint8_t> { static constexpr DType dtype = DType::UInt8; };
template <> struct Of<int8_t> { static constexpr DType dtype = DType::Int8; };
template <> struct Of<int32_t> { static constexpr DType dtype = DType::Int32; };
template <> struct Of<int64_t> { static constexpr DType dtype = DType::Int64; };
template <> struct Of<__half> { static constexpr DType dtype = DType::Float16; };
template <> struct Of<__nv_bfloat16> { static constexpr DType dtype = DType::BFloat16; };
template <> struct Of<float> { static constexpr DType dtype = DType::Float32; };
template <> struct Of<double> { static constexpr DType dtype = DType::Float64; };

// Row values with many ties and, per dtype, the elements whose order is
// easiest to get wrong.
template <class T>
std::vector<double> row_values(int64_t count, unsigned seed) {
  std::vector<double> v = normal_values(static_cast<size_t>(count), 3.0, seed);
  const DType dt = Of<T>::dtype;
  for (double& e : v) {
    e = std::round(e * 2) / 2;  // ties
    if (dt == DType::Bool) e = e > 0;
    else if (dt == DType::UInt8) e = std::fabs(e) * 2;
    else if (!ember::is_floating(dt)) e = std::round(e);
  }
  std::vector<double> specials;
  if (ember::is_floating(dt)) specials = {NAN, INFINITY, -INFINITY, -0.0, 0.0, NAN, -0.0};
  else if (dt == DType::Int8) specials = {-128, 127, -128};
  else if (dt == DType::UInt8) specials = {255, 0, 255};
  else if (dt == DType::Int32) specials = {-2147483648.0, 2147483647.0};
  else if (dt == DType::Int64) specials = {-9223372036854775808.0, 4611686018427387904.0, -4611686018427387904.0};
  for (size_t j = 0; j < specials.size() && count > 0; ++j) {
    v[(j * 7919 + seed) % v.size()] = specials[j];
  }
  return v;
}

struct Expected {
  Tensor values;   // x's dtype
  Tensor indices;  // int64
};

// The CPU kernel's answer; it sorts half types in float32, as the front-end does.
Expected cpu_sort(const Tensor& x, int64_t rows, int64_t n, bool descending) {
  const Tensor xc = ember::is_half(x.dtype()) ? x.to(DType::Float32) : x;
  Tensor v = ember::empty({rows, n}, xc.dtype()), i = ember::empty({rows, n}, DType::Int64);
  ember::cpu::sort(v, i, xc, rows, n, descending);
  return {v.to(x.dtype()), i};
}

// Values compared as bytes (NaN and the sign of zero included), indices exactly.
void require_same(const Tensor& got_v, const Tensor& got_i, const Expected& want) {
  const int64_t count = got_i.numel();
  const int64_t* gi = got_i.data<int64_t>();
  const int64_t* wi = want.indices.data<int64_t>();
  int64_t bad_index = -1;
  for (int64_t j = 0; j < count && bad_index < 0; ++j) {
    if (gi[j] != wi[j]) bad_index = j;
  }
  INFO("first wrong index at " << bad_index << (bad_index >= 0 ? "" : " (none)"));
  REQUIRE(bad_index < 0);
  const size_t bytes = static_cast<size_t>(count) * ember::itemsize(got_v.dtype());
  REQUIRE(std::memcmp(got_v.data_ptr(), want.values.data_ptr(), bytes) == 0);
}

// Kernel outputs filled with a pattern no correct result has everywhere.
Tensor garbage(const Shape& shape, DType dtype) {
  Tensor t = ember::empty(shape, dtype);
  std::memset(t.data_ptr(), 0x5A, static_cast<size_t>(t.numel()) * ember::itemsize(dtype));
  return t;
}

template <class T>
void bitonic_case(int64_t rows, int64_t n, bool descending) {
  INFO("bitonic rows " << rows << " n " << n << " descending " << descending << " dtype "
                       << ember::dtype_name(Of<T>::dtype));
  const Tensor x = tensor_of(row_values<T>(rows * n, static_cast<unsigned>(n + rows)), {rows, n}, Of<T>::dtype);
  const Expected want = cpu_sort(x, rows, n, descending);
  Tensor v = garbage({rows, n}, Of<T>::dtype), i = garbage({rows, n}, DType::Int64);
  const int len = ember::cuda::bitonic_length(n);
  REQUIRE(len >= n);
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, 2));  // grid-stride over the rows
  launch(grid, ember::cuda::bitonic_threads(len), ember::cuda::bitonic_shared_bytes<T>(len), [&] {
    ember::cuda::bitonic_sort_kernel<T>(ptr<T>(x), ptr<T>(v), ptr<int64_t>(i), rows, static_cast<int>(n), len,
                                        descending);
  });
  require_same(v, i, want);
}

// A stable sort of (keys, values) by the low `bits` bits of the keys: what
// cub::DeviceRadixSort::SortPairs computes.
void host_radix_sort(std::vector<uint64_t>& keys, std::vector<int32_t>& vals, int bits) {
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  std::vector<size_t> order(keys.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (keys[a] & mask) < (keys[b] & mask); });
  std::vector<uint64_t> k(keys.size());
  std::vector<int32_t> p(vals.size());
  for (size_t j = 0; j < order.size(); ++j) k[j] = keys[order[j]], p[j] = vals[order[j]];
  keys.swap(k);
  vals.swap(p);
}

template <class T>
void radix_case(int64_t rows, int64_t n, bool descending) {
  INFO("radix rows " << rows << " n " << n << " descending " << descending << " dtype "
                     << ember::dtype_name(Of<T>::dtype));
  const int64_t total = rows * n;
  const Tensor x = tensor_of(row_values<T>(total, static_cast<unsigned>(n)), {rows, n}, Of<T>::dtype);
  const Expected want = cpu_sort(x, rows, n, descending);
  std::vector<uint64_t> keys(static_cast<size_t>(total), 0xDEADBEEFull);
  std::vector<int32_t> pos(static_cast<size_t>(total), -7);
  const int threads = ember::cuda::kSortThreads;
  const unsigned grid = 3;  // fewer blocks than work: grid-stride loops
  launch(grid, threads, 0, [&] { ember::cuda::sort_keys_kernel<T>(ptr<T>(x), keys.data(), pos.data(), total, descending); });
  host_radix_sort(keys, pos, static_cast<int>(sizeof(ember::cuda::SortKey<T>) * 8));
  if (rows > 1) {
    launch(grid, threads, 0, [&] { ember::cuda::row_keys_kernel(pos.data(), keys.data(), total, n); });
    int row_bits = 1;
    while ((int64_t{1} << row_bits) < rows) ++row_bits;
    host_radix_sort(keys, pos, row_bits);
  }
  Tensor v = garbage({rows, n}, Of<T>::dtype), i = garbage({rows, n}, DType::Int64);
  launch(grid, threads, 0, [&] {
    ember::cuda::gather_sorted_kernel<T>(ptr<T>(x), pos.data(), ptr<T>(v), ptr<int64_t>(i), total, n);
  });
  require_same(v, i, want);
}

template <class T>
void all_cases() {
  for (bool descending : {false, true}) {
    for (int64_t n : {1, 2, 3, 31, 32, 33, 100, 256, 257}) bitonic_case<T>(3, n, descending);
    radix_case<T>(3, 700, descending);
    radix_case<T>(1, 3000, descending);
  }
}

}  // namespace

TEST_CASE("bitonic and radix sort kernels (host emulation) against the CPU sort: floating dtypes", "[emulation]") {
  all_cases<float>();
  all_cases<double>();
  all_cases<__half>();
  all_cases<__nv_bfloat16>();
}

TEST_CASE("bitonic and radix sort kernels (host emulation) against the CPU sort: integer and bool dtypes", "[emulation]") {
  all_cases<bool>();
  all_cases<uint8_t>();
  all_cases<int8_t>();
  all_cases<int32_t>();
  all_cases<int64_t>();
}

TEST_CASE("bitonic sort kernel (host emulation): the longest rows a block sorts", "[emulation]") {
  bitonic_case<float>(2, ember::cuda::kBitonicMaxRow, false);
  bitonic_case<double>(1, ember::cuda::kBitonicMaxRow - 1, true);
  bitonic_case<int64_t>(1, 1500, false);
}
