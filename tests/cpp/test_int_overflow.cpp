// Integer arithmetic at the overflow edges wraps around (two's complement)
// in the CPU kernels, the shared formulas of core/int_math.h and the gloo
// reductions. Results are checked against exact 128-bit arithmetic reduced
// modulo 2^bits. Signed overflow is undefined in C++, and GCC happens to give
// the wrapped values anyway, so the values alone rarely fail without the fix:
// build with cmake -DEMBER_UBSAN_INT=ON (cmake/ubsan_int.cmake), where the
// CPU kernels and this file run under -fsanitize=signed-integer-overflow and
// any overflow left in them aborts these cases.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <ember/core/int_math.h>
#include <ember/distributed/gloo/gloo_reduce.h>

#include "util.h"

using namespace ember;

namespace {

using Wide = __int128;

// The two's complement value of v in T: v modulo 2^bits, as numpy gives it.
template <class T>
T wrapped(Wide v) {
  return static_cast<T>(static_cast<uint64_t>(v));  // both conversions are modular
}

template <class T> DType dtype_of();
template <> DType dtype_of<int8_t>() { return DType::Int8; }
template <> DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> DType dtype_of<int32_t>() { return DType::Int32; }
template <> DType dtype_of<int64_t>() { return DType::Int64; }

template <class T>
Tensor ints(const std::vector<T>& v, const Shape& shape) {
  Tensor t = empty(shape, dtype_of<T>());
  REQUIRE(t.numel() == static_cast<int64_t>(v.size()));
  std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(T));
  return t;
}

template <class T>
std::vector<T> read(const Tensor& t) {
  REQUIRE(t.dtype() == dtype_of<T>());
  Tensor c = t.contiguous();
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

template <class T>
std::vector<T> edges() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {L::max(), L::min(), static_cast<T>(L::min() + 1), static_cast<T>(L::max() - 1),
                      static_cast<T>(L::max() / 2 + 1)};
  for (int k = -3; k <= 3; ++k) v.push_back(static_cast<T>(k));
  return v;
}

// Every pair of edge values: a[i][j] = e[i], b[i][j] = e[j] (144 elements,
// enough for the vectorized loops).
template <class T>
void grid(std::vector<T>& a, std::vector<T>& b) {
  const std::vector<T> e = edges<T>();
  for (T x : e)
    for (T y : e) a.push_back(x), b.push_back(y);
}

template <class T, class F>
std::vector<T> reference(const std::vector<T>& a, const std::vector<T>& b, F f) {
  std::vector<T> r;
  for (size_t i = 0; i < a.size(); ++i) r.push_back(wrapped<T>(f(Wide(a[i]), Wide(b[i]))));
  return r;
}

template <class T>
void check_binary_kernels() {
  std::vector<T> a, b;
  grid(a, b);
  const int64_t k = static_cast<int64_t>(edges<T>().size());
  const Tensor ta = ints(a, {k, k}), tb = ints(b, {k, k});
  // Transposed copies viewed back: same values through the strided loop.
  const Tensor sa = ta.t().contiguous().t(), sb = tb.t().contiguous().t();
  const auto plus = [](Wide x, Wide y) { return x + y; };
  const auto minus = [](Wide x, Wide y) { return x - y; };
  const auto times = [](Wide x, Wide y) { return x * y; };
  for (const auto& [x, y] : {std::pair{ta, tb}, std::pair{sa, sb}, std::pair{ta, sb}}) {
    CHECK(read<T>(add(x, y)) == reference(a, b, plus));
    CHECK(read<T>(sub(x, y)) == reference(a, b, minus));
    CHECK(read<T>(mul(x, y)) == reference(a, b, times));
    CHECK(read<T>(add(x, y, 3)) == reference(a, b, [](Wide p, Wide q) { return p + 3 * q; }));
    CHECK(read<T>(sub(x, y, -7)) == reference(a, b, [](Wide p, Wide q) { return p + 7 * q; }));
  }
  // Broadcast: a column against a row, and a 0-d operand (stride 0).
  const std::vector<T> e = edges<T>();
  const Tensor col = ints(e, {k, 1}), row = ints(e, {1, k});
  CHECK(read<T>(add(col, row)) == reference(a, b, plus));
  CHECK(read<T>(mul(col, row)) == reference(a, b, times));
  for (T v : {std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T(-1)}) {
    const Tensor s = ints(std::vector<T>{v}, {});
    CHECK(read<T>(add(ta, s)) == reference(a, std::vector<T>(a.size(), v), plus));
    CHECK(read<T>(sub(s, ta)) == reference(std::vector<T>(a.size(), v), a, minus));
    CHECK(read<T>(mul(ta, s)) == reference(a, std::vector<T>(a.size(), v), times));
  }
}

template <class T>
void check_unary_kernels() {
  std::vector<T> a, unused;
  grid(a, unused);
  const int64_t k = static_cast<int64_t>(edges<T>().size());
  std::vector<T> negated, absolute, squared, cubed;
  for (T x : a) {
    negated.push_back(wrapped<T>(-Wide(x)));
    absolute.push_back(wrapped<T>(x < 0 ? -Wide(x) : Wide(x)));
    squared.push_back(wrapped<T>(Wide(x) * Wide(x)));
    // x^3 modulo 2^64: for int64 x it does not fit in 128 bits.
    const uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(x));
    cubed.push_back(static_cast<T>(u * u * u));
  }
  for (const Tensor& t : {ints(a, {k, k}), ints(a, {k, k}).t().contiguous().t()}) {
    CHECK(read<T>(neg(t)) == negated);
    CHECK(read<T>(abs(t)) == absolute);
    CHECK(read<T>(square(t)) == squared);
    CHECK(read<T>(pow(t, 2)) == squared);
    CHECK(read<T>(pow(t, 3)) == cubed);
  }
}

template <class T>
void check_reductions() {
  using L = std::numeric_limits<T>;
  std::vector<T> a;
  for (int i = 0; i < 50000; ++i) a.push_back(i % 7 == 0 ? L::min() : L::max());
  Wide total = 0;
  std::vector<int64_t> running;
  for (T x : a) total += x, running.push_back(wrapped<int64_t>(total));
  const Tensor t = ints(a, {static_cast<int64_t>(a.size())});
  // sum and cumsum of integers are int64, wrapping there (int64 inputs overflow).
  CHECK(read<int64_t>(sum(t)) == std::vector<int64_t>{wrapped<int64_t>(total)});
  CHECK(read<int64_t>(cumsum(t, 0)) == running);
  // Columns (the inner > 1 fold) of a [100, 500] view.
  const Tensor m = t.reshape({100, 500});
  const std::vector<int64_t> cols = read<int64_t>(sum(m, {0}));
  Wide col0 = 0;
  for (int r = 0; r < 100; ++r) col0 += a[static_cast<size_t>(r) * 500];
  CHECK(cols[0] == wrapped<int64_t>(col0));
  // prod: 3^50 * min wraps modulo 2^64.
  std::vector<T> p(50, T(3));
  p.push_back(L::min());
  uint64_t expected = 1;
  for (T x : p) expected *= static_cast<uint64_t>(static_cast<int64_t>(x));
  CHECK(read<int64_t>(prod(ints(p, {51}))) == std::vector<int64_t>{static_cast<int64_t>(expected)});
}

template <class T>
void check_accumulating_index_ops() {
  using L = std::numeric_limits<T>;
  const std::vector<T> base = {L::max(), L::min(), 0};
  const std::vector<T> vals = {T(1), T(-1), L::max(), L::max()};
  const std::vector<int64_t> idx = {0, 1, 0, 2};
  std::vector<Wide> acc(base.begin(), base.end());
  for (size_t i = 0; i < idx.size(); ++i) acc[static_cast<size_t>(idx[i])] += vals[i];
  std::vector<T> expected;
  for (Wide v : acc) expected.push_back(wrapped<T>(v));
  const Tensor index = ints(idx, {4});
  Tensor x = ints(base, {3});
  index_put_(x, {index}, ints(vals, {4}), true);
  CHECK(read<T>(x) == expected);
  CHECK(read<T>(index_add(ints(base, {3}), 0, index, ints(vals, {4}))) == expected);
  CHECK(read<T>(scatter_add(ints(base, {3}), 0, index, ints(vals, {4}))) == expected);
}

template <class T>
void check_int_math() {
  const std::vector<T> e = edges<T>();
  for (T x : e) {
    CHECK(int_math::wrapping_neg(x) == wrapped<T>(-Wide(x)));
    CHECK(int_math::wrapping_abs(x) == wrapped<T>(x < 0 ? -Wide(x) : Wide(x)));
    for (T y : e) {
      CHECK(int_math::wrapping_add(x, y) == wrapped<T>(Wide(x) + Wide(y)));
      CHECK(int_math::wrapping_sub(x, y) == wrapped<T>(Wide(x) - Wide(y)));
      CHECK(int_math::wrapping_mul(x, y) == wrapped<T>(Wide(x) * Wide(y)));
    }
  }
}

}  // namespace

TEST_CASE("int_math's wrapping helpers give two's complement results", "[int-overflow]") {
  check_int_math<int8_t>();
  check_int_math<uint8_t>();
  check_int_math<int32_t>();
  check_int_math<int64_t>();
  // For floats they are the plain operators: -(+0) stays -0.
  CHECK(std::signbit(int_math::wrapping_neg(0.0f)));
  CHECK(int_math::wrapping_add(0.1, 0.2) == 0.1 + 0.2);
  CHECK(int_math::wrapping_mul(3.5f, -2.0f) == -7.0f);
}

TEST_CASE("integer add sub and mul kernels wrap on every layout", "[int-overflow]") {
  check_binary_kernels<int8_t>();
  check_binary_kernels<int32_t>();
  check_binary_kernels<int64_t>();
}

TEST_CASE("integer neg abs square and pow kernels wrap", "[int-overflow]") {
  check_unary_kernels<int8_t>();
  check_unary_kernels<int32_t>();
  check_unary_kernels<int64_t>();
}

TEST_CASE("integer sum cumsum and prod wrap in int64", "[int-overflow]") {
  check_reductions<int8_t>();
  check_reductions<int32_t>();
  check_reductions<int64_t>();
}

TEST_CASE("accumulating index ops wrap", "[int-overflow]") {
  check_accumulating_index_ops<int32_t>();
  check_accumulating_index_ops<int64_t>();
}

TEST_CASE("arange with int64 bounds whose difference overflows", "[int-overflow]") {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kQuarter = int64_t{1} << 62;
  CHECK(read<int64_t>(arange(kMin, kMax, kQuarter)) == std::vector<int64_t>{kMin, -kQuarter, 0, kQuarter});
  CHECK(read<int64_t>(arange(kMax, kMin, -kQuarter)) ==
        std::vector<int64_t>{kMax, kMax - kQuarter, -1, -1 - kQuarter});
  CHECK(read<int64_t>(arange(kMax, kMin, -kMax)) == std::vector<int64_t>{kMax, 0, -kMax});
}

TEST_CASE("gloo's integer SUM and PRODUCT wrap", "[int-overflow][distributed]") {
  using distributed::ReduceOp;
  const std::vector<int32_t> a = {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 7};
  const std::vector<int32_t> b = {1, -1, std::numeric_limits<int32_t>::max()};
  std::vector<int32_t> out(3);
  distributed::gloo_detail::reduce_fn<int32_t>(ReduceOp::Sum)(out.data(), a.data(), b.data(), 3);
  CHECK(out == std::vector<int32_t>{wrapped<int32_t>(Wide(a[0]) + 1), wrapped<int32_t>(Wide(a[1]) - 1),
                                    wrapped<int32_t>(Wide(7) + b[2])});
  distributed::gloo_detail::reduce_fn<int32_t>(ReduceOp::Product)(out.data(), a.data(), b.data(), 3);
  CHECK(out == std::vector<int32_t>{a[0], wrapped<int32_t>(-Wide(a[1])), wrapped<int32_t>(Wide(7) * b[2])});
}
