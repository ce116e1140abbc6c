// The reduction kernels (cuda/device/reduce_kernels.cuh) run on the CPU
// through tests/cpp/cuda_emulation.h against ember's CPU kernels
// (core/cpu/reduce*.cpp): sum/mean/prod/max/min/all/any through the
// single-block path and the two-pass split path for long columns
// (fold_plan), var/std, logsumexp, p-norms, argmax/argmin (ties to the lower
// index, NaN first), prod's backward and cumsum; strided (inner > 1), tiled
// (inner >= kTileMinInner) and empty columns, fewer blocks than columns
// (grid-stride loops), NaN and infinities.
#include <ember/core/cpu/reduce.h>
#include <ember/core/tensor.h>

#include "emulation_util.h"

#include "cuda_emulation.h"

#include <ember/cuda/device/reduce_kernels.cuh>

namespace {

using namespace emu_test;
using ember::ReduceOp;
namespace kc = ember::cuda;

unsigned small_grid(int64_t blocks) { return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, 5))); }

// cuda/reduce.cu's fold_tiles(): tiles of adjacent columns, in one pass or
// chunk partials then a second pass.
template <class T, class A, class O, class Fold>
void emulated_fold_tiles(const Tensor& x, Tensor& out, int64_t outer, int64_t reduced, int64_t inner, double scale) {
  const kc::TilePlan plan = kc::tile_plan(outer, reduced, inner);
  const dim3 block(kc::kTileColumns, kc::kTileRows);
  if (plan.chunks == 1) {
    launch(small_grid(outer * plan.tiles), block, 0, [&] {
      kc::fold_tile_kernel<T, A, O, Fold>(ptr<T>(x), ptr<O>(out), nullptr, outer, reduced, inner, plan.tiles,
                                          plan.chunk, 1, scale);
    });
    return;
  }
  std::unique_ptr<A[]> partial(new A[static_cast<size_t>(outer * plan.chunks * inner)]);
  launch(small_grid(outer * plan.tiles * plan.chunks), block, 0, [&] {
    kc::fold_tile_kernel<T, A, O, Fold>(ptr<T>(x), ptr<O>(out), partial.get(), outer, reduced, inner, plan.tiles,
                                        plan.chunk, plan.chunks, scale);
  });
  launch(small_grid(outer * plan.tiles), block, 0, [&] {
    kc::fold_tile_kernel<A, A, O, Fold>(partial.get(), ptr<O>(out), nullptr, outer, plan.chunks, inner, plan.tiles,
                                        plan.chunks, 1, scale);
  });
}

// cuda/reduce.cu's fold(): tiles for a wide inner axis; else one pass, or
// partials then a second pass.
template <class T, class A, class O, class Fold>
void emulated_fold(const Tensor& x, Tensor& out, int64_t outer, int64_t reduced, int64_t inner, double scale) {
  if (inner >= kc::kTileMinInner) return emulated_fold_tiles<T, A, O, Fold>(x, out, outer, reduced, inner, scale);
  const int64_t columns = outer * inner;
  const kc::FoldPlan plan = kc::fold_plan(columns, reduced);
  if (plan.chunks == 1) {
    launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
      kc::fold_kernel<T, A, O, Fold>(ptr<T>(x), ptr<O>(out), nullptr, columns, reduced, inner, plan.chunk, 1, true, scale);
    });
    return;
  }
  std::unique_ptr<A[]> partial(new A[static_cast<size_t>(columns * plan.chunks)]);
  launch(small_grid(columns * plan.chunks), kc::kReduceThreads, 0, [&] {
    kc::fold_kernel<T, A, O, Fold>(ptr<T>(x), ptr<O>(out), partial.get(), columns, reduced, inner, plan.chunk,
                                   plan.chunks, false, scale);
  });
  launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
    kc::fold_kernel<A, A, O, Fold>(partial.get(), ptr<O>(out), nullptr, columns, plan.chunks, 1, plan.chunks, 1, true,
                                   scale);
  });
}

template <class T> constexpr DType dtype_of_v = ember::dtype_of<T>::value;

template <class T>
Tensor input(int64_t outer, int64_t reduced, int64_t inner, unsigned seed, std::vector<std::pair<int64_t, double>> specials,
             double scale = 1.0, double offset = 0.0) {
  std::vector<double> v = normal_values(static_cast<size_t>(outer * reduced * inner), scale, seed);
  for (double& e : v) e = std::is_floating_point_v<T> ? e + offset : std::round(e + offset);
  for (auto [i, x] : specials) v[static_cast<size_t>(i)] = x;
  return tensor_of(v, {outer, reduced, inner}, dtype_of_v<T>);
}

template <class T>
void fold_case(int64_t outer, int64_t reduced, int64_t inner, std::vector<std::pair<int64_t, double>> specials = {}) {
  using A = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  const DType dt = dtype_of_v<T>;
  INFO("fold outer " << outer << " reduced " << reduced << " inner " << inner << " chunks "
                     << (inner >= kc::kTileMinInner ? kc::tile_plan(outer, reduced, inner).chunks
                                                    : kc::fold_plan(outer * inner, reduced).chunks)
                     << " " << ember::dtype_name(dt));
  const int64_t columns = outer * inner;
  const Tensor x = input<T>(outer, reduced, inner, static_cast<unsigned>(reduced), specials, 3.0);
  const bool fp = std::is_floating_point_v<T>;
  const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-10;
  auto check = [&](ReduceOp op, auto run, const char* what) {
    INFO(what);
    const DType od = op == ReduceOp::All || op == ReduceOp::Any ? DType::Bool : dt;
    Tensor got = nan_tensor({columns}, od), want = nan_tensor({columns}, od);
    ember::cpu::reduce(op, want, x, outer, reduced, inner);
    run(got);
    require_close(values_of(got), values_of(want), fp ? tol : 0, fp ? tol * std::sqrt(double(reduced)) : 0, what);
  };
  check(ReduceOp::Sum, [&](Tensor& o) { emulated_fold<T, A, T, kc::SumFold<A>>(x, o, outer, reduced, inner, 1.0); }, "sum");
  if (fp) {
    check(ReduceOp::Mean, [&](Tensor& o) {
      emulated_fold<T, A, T, kc::SumFold<A>>(x, o, outer, reduced, inner, 1.0 / static_cast<double>(reduced));
    }, "mean");
  }
  check(ReduceOp::Max, [&](Tensor& o) { emulated_fold<T, T, T, kc::ExtremeFold<T, true>>(x, o, outer, reduced, inner, 1.0); }, "max");
  check(ReduceOp::Min, [&](Tensor& o) { emulated_fold<T, T, T, kc::ExtremeFold<T, false>>(x, o, outer, reduced, inner, 1.0); }, "min");
  check(ReduceOp::All, [&](Tensor& o) { emulated_fold<T, bool, bool, kc::LogicalFold<true>>(x, o, outer, reduced, inner, 1.0); }, "all");
  check(ReduceOp::Any, [&](Tensor& o) { emulated_fold<T, bool, bool, kc::LogicalFold<false>>(x, o, outer, reduced, inner, 1.0); }, "any");
}

// A 16-bit input's sum and mean (cuda/reduce.cu's reduce_half): read as it
// is, accumulated and written in float32, as the CPU sums its float32 copy.
template <class H>
void half_fold_case(DType dt, int64_t outer, int64_t reduced, int64_t inner) {
  INFO(ember::dtype_name(dt) << " fold outer " << outer << " reduced " << reduced << " inner " << inner);
  const int64_t columns = outer * inner;
  const Tensor x = tensor_of(normal_values(static_cast<size_t>(outer * reduced * inner), 2.0, 7),
                             {outer, reduced, inner}, dt);
  const Tensor wide = x.to(DType::Float32);
  for (const bool mean : {false, true}) {
    const double scale = mean ? 1.0 / static_cast<double>(reduced) : 1.0;
    Tensor got = nan_tensor({columns}, DType::Float32), want = nan_tensor({columns}, DType::Float32);
    ember::cpu::reduce(mean ? ReduceOp::Mean : ReduceOp::Sum, want, wide, outer, reduced, inner);
    emulated_fold<H, float, float, kc::SumFold<float>>(x, got, outer, reduced, inner, scale);
    require_close(values_of(got), values_of(want), 1e-4, 1e-4 * std::sqrt(double(reduced)), mean ? "mean" : "sum");
  }
}

template <class T>
void prod_case(int64_t outer, int64_t reduced, int64_t inner) {
  using A = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
  INFO("prod outer " << outer << " reduced " << reduced << " inner " << inner);
  const int64_t columns = outer * inner;
  // Near 1 so long products stay finite; integers: -1, 0, 1 mostly.
  const Tensor x = std::is_floating_point_v<T> ? input<T>(outer, reduced, inner, 5, {}, 0.01, 1.0)
                                               : input<T>(outer, reduced, inner, 5, {}, 0.4, 1.0);
  Tensor got = nan_tensor({columns}, dtype_of_v<T>), want = nan_tensor({columns}, dtype_of_v<T>);
  ember::cpu::reduce(ReduceOp::Prod, want, x, outer, reduced, inner);
  emulated_fold<T, A, T, kc::ProdFold<A>>(x, got, outer, reduced, inner, 1.0);
  require_close(values_of(got), values_of(want), 1e-4, 1e-6, "prod");
}

// cuda/reduce.cu's var / logsumexp / norm: one pass, or per-chunk partials
// then a second pass (fold_plan decides, as there).
template <class T>
void emulated_var(const Tensor& x, Tensor& out, int64_t outer, int64_t reduced, int64_t inner, double denom,
                  bool take_sqrt) {
  const int64_t columns = outer * inner;
  const kc::FoldPlan plan = kc::fold_plan(columns, reduced);
  if (plan.chunks == 1) {
    launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
      kc::var_kernel<T>(ptr<T>(x), ptr<T>(out), nullptr, columns, reduced, inner, plan.chunk, 1, denom, take_sqrt);
    });
    return;
  }
  std::vector<double> partial(static_cast<size_t>(3 * columns * plan.chunks), NAN);
  launch(small_grid(columns * plan.chunks), kc::kReduceThreads, 0, [&] {
    kc::var_kernel<T>(ptr<T>(x), ptr<T>(out), partial.data(), columns, reduced, inner, plan.chunk, plan.chunks, denom,
                      take_sqrt);
  });
  launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
    kc::var_merge_kernel<T>(partial.data(), ptr<T>(out), columns, plan.chunks, denom, take_sqrt);
  });
}

template <class T>
void emulated_logsumexp(const Tensor& x, Tensor& out, int64_t outer, int64_t reduced, int64_t inner) {
  const int64_t columns = outer * inner;
  const kc::FoldPlan plan = kc::fold_plan(columns, reduced);
  if (plan.chunks == 1) {
    launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
      kc::logsumexp_kernel<T, T>(ptr<T>(x), nullptr, ptr<T>(out), nullptr, nullptr, columns, reduced, inner, plan.chunk, 1);
    });
    return;
  }
  std::vector<double> partial(static_cast<size_t>(2 * columns * plan.chunks), NAN);
  double* part_m = partial.data();
  double* part_s = part_m + columns * plan.chunks;
  launch(small_grid(columns * plan.chunks), kc::kReduceThreads, 0, [&] {
    kc::logsumexp_kernel<T, T>(ptr<T>(x), nullptr, ptr<T>(out), part_m, part_s, columns, reduced, inner, plan.chunk,
                               plan.chunks);
  });
  launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
    kc::logsumexp_kernel<double, T>(part_m, part_s, ptr<T>(out), nullptr, nullptr, columns, plan.chunks, 1, plan.chunks, 1);
  });
}

template <class T>
void emulated_norm(const Tensor& x, Tensor& out, double p, int64_t outer, int64_t reduced, int64_t inner) {
  const int64_t columns = outer * inner;
  const kc::FoldPlan plan = kc::fold_plan(columns, reduced);
  if (plan.chunks == 1) {
    launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
      kc::norm_kernel<T, T>(ptr<T>(x), ptr<T>(out), nullptr, columns, reduced, inner, plan.chunk, 1, p, false);
    });
    return;
  }
  std::vector<double> partial(static_cast<size_t>(columns * plan.chunks), NAN);
  launch(small_grid(columns * plan.chunks), kc::kReduceThreads, 0, [&] {
    kc::norm_kernel<T, T>(ptr<T>(x), ptr<T>(out), partial.data(), columns, reduced, inner, plan.chunk, plan.chunks, p,
                          false);
  });
  launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
    kc::norm_kernel<double, T>(partial.data(), ptr<T>(out), nullptr, columns, plan.chunks, 1, plan.chunks, 1, p, true);
  });
}

// var/std, logsumexp and norms of x against the CPU; `offset` shifts the
// values (var's accuracy with a large mean).
template <class T>
void stats_case(int64_t outer, int64_t reduced, int64_t inner, std::vector<std::pair<int64_t, double>> specials = {},
                double offset = 0.5, bool prod_backward = true) {
  const DType dt = dtype_of_v<T>;
  INFO("stats outer " << outer << " reduced " << reduced << " inner " << inner << " " << ember::dtype_name(dt)
                      << " chunks " << kc::fold_plan(outer * inner, reduced).chunks);
  const int64_t columns = outer * inner;
  const Tensor x = input<T>(outer, reduced, inner, 9, specials, 2.0, offset);
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (double correction : {0.0, 1.0}) {
    for (bool take_sqrt : {false, true}) {
      INFO("var correction " << correction << " sqrt " << take_sqrt);
      Tensor got = nan_tensor({columns}, dt), want = nan_tensor({columns}, dt);
      ember::cpu::var(want, x, outer, reduced, inner, correction, take_sqrt);
      const double n = static_cast<double>(reduced), denom = n - correction > 0.0 ? n - correction : 0.0;
      emulated_var<T>(x, got, outer, reduced, inner, denom, take_sqrt);
      require_close(values_of(got), values_of(want), tol, tol, "var");
    }
  }
  {
    Tensor got = nan_tensor({columns}, dt), want = nan_tensor({columns}, dt);
    ember::cpu::logsumexp(want, x, outer, reduced, inner);
    emulated_logsumexp<T>(x, got, outer, reduced, inner);
    require_close(values_of(got), values_of(want), tol, tol, "logsumexp");
  }
  for (double p : std::vector<double>{2.0, 1.0, 0.0, 3.0, 0.5, INFINITY, -INFINITY}) {
    INFO("norm p " << p);
    Tensor got = nan_tensor({columns}, dt), want = nan_tensor({columns}, dt);
    ember::cpu::norm(want, x, p, outer, reduced, inner);
    emulated_norm<T>(x, got, p, outer, reduced, inner);
    require_close(values_of(got), values_of(want), tol, tol, "norm");
  }
  if (prod_backward) {
    Tensor got = nan_tensor({outer, reduced, inner}, dt), want = nan_tensor({outer, reduced, inner}, dt);
    ember::cpu::prod_others(want, x, outer, reduced, inner);
    launch(2, 64, 0, [&] { kc::prod_others_kernel<T>(ptr<T>(x), ptr<T>(got), columns, reduced, inner); });
    require_close(values_of(got), values_of(want), tol, 1e-30, "prod_others");
  }
}

template <class T>
void arg_case(int64_t outer, int64_t reduced, int64_t inner, std::vector<std::pair<int64_t, double>> specials = {}) {
  INFO("arg outer " << outer << " reduced " << reduced << " inner " << inner << " " << ember::dtype_name(dtype_of_v<T>));
  const int64_t columns = outer * inner;
  // Few distinct values: many ties, which must go to the lowest index.
  std::vector<double> v(static_cast<size_t>(outer * reduced * inner));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7919) % 13);
  for (auto [i, x] : specials) v[static_cast<size_t>(i)] = x;
  const Tensor x = tensor_of(v, {outer, reduced, inner}, dtype_of_v<T>);
  for (bool is_max : {true, false}) {
    INFO("is_max " << is_max);
    Tensor vals = nan_tensor({columns}, dtype_of_v<T>), want_vals = nan_tensor({columns}, dtype_of_v<T>);
    Tensor idx = tensor_of(std::vector<double>(columns, -7), {columns}, DType::Int64), want_idx = idx.to(DType::Int64, true);
    ember::cpu::arg_reduce(is_max, want_vals, want_idx, x, outer, reduced, inner);
    launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
      if (is_max) kc::arg_kernel<T, true>(ptr<T>(x), ptr<T>(vals), ptr<int64_t>(idx), columns, reduced, inner);
      else kc::arg_kernel<T, false>(ptr<T>(x), ptr<T>(vals), ptr<int64_t>(idx), columns, reduced, inner);
    });
    require_close(values_of(idx), values_of(want_idx), 0, 0, "indices");
    require_close(values_of(vals), values_of(want_vals), 0, 0, "values");
  }
}

// cuda/reduce.cu's cumsum: cumsum_plan picks the serial kernel, a block per
// column, or chunk sums then a block per chunk.
template <class T, class A>
void emulated_cumsum(const Tensor& x, Tensor& out, int64_t outer, int64_t length, int64_t inner) {
  const int64_t columns = outer * inner;
  const kc::ScanPlan plan = kc::cumsum_plan(columns, length, inner);
  if (plan.serial) {
    launch(2, 64, 0, [&] { kc::cumsum_kernel<T, A>(ptr<T>(x), ptr<T>(out), columns, length, inner); });
  } else if (plan.chunks == 1) {
    launch(small_grid(columns), kc::kReduceThreads, 0, [&] {
      kc::cumsum_block_kernel<T, A>(ptr<T>(x), ptr<T>(out), nullptr, columns, length, inner, plan.chunk, 1);
    });
  } else {
    std::vector<A> sums(static_cast<size_t>(columns * plan.chunks), A(-77));
    launch(small_grid(columns * plan.chunks), kc::kReduceThreads, 0, [&] {
      kc::fold_kernel<T, A, T, kc::SumFold<A>>(ptr<T>(x), nullptr, sums.data(), columns, length, inner, plan.chunk,
                                              plan.chunks, false, 1.0);
    });
    launch(small_grid(columns * plan.chunks), kc::kReduceThreads, 0, [&] {
      kc::cumsum_block_kernel<T, A>(ptr<T>(x), ptr<T>(out), sums.data(), columns, length, inner, plan.chunk,
                                    plan.chunks);
    });
  }
}

// Integers must match the CPU exactly; floats up to the order of the double
// additions (1e-6 relative to float32's 6e-8 ulp, and 1e-12 for float64).
template <class T>
void cumsum_case(int64_t outer, int64_t length, int64_t inner, double scale = 4.0) {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  const kc::ScanPlan plan = kc::cumsum_plan(outer * inner, length, inner);
  INFO("cumsum outer " << outer << " length " << length << " inner " << inner << " " << ember::dtype_name(dtype_of_v<T>)
                       << " serial " << plan.serial << " chunks " << plan.chunks);
  const Tensor x = input<T>(outer, length, inner, 3, {}, scale);
  Tensor got = nan_tensor({outer, length, inner}, dtype_of_v<T>), want = nan_tensor({outer, length, inner}, dtype_of_v<T>);
  ember::cpu::cumsum(want, x, outer, length, inner);
  emulated_cumsum<T, A>(x, got, outer, length, inner);
  const double tol = std::is_same_v<T, float> ? 1e-6 : std::is_same_v<T, double> ? 1e-12 : 0.0;
  require_close(values_of(got), values_of(want), tol, tol, "cumsum");
}

}  // namespace

TEST_CASE("reduction folds (host emulation): one pass and two passes, against the CPU", "[emulation]") {
  REQUIRE(kc::fold_plan(1, 20000).chunks == 5);  // the split path is taken below
  REQUIRE(kc::fold_plan(6, 9000).chunks == 3);
  REQUIRE(kc::fold_plan(600, 9000).chunks == 1);
  REQUIRE(kc::tile_plan(1, 3000, 40).chunks == 11);  // tiles: chunked, and in one pass
  REQUIRE(kc::tile_plan(3, 100, 17).chunks == 1);
  REQUIRE(kc::tile_plan(1, 8192, 768).chunks == 32);  // a bias gradient's sum: 24 tiles x 32 chunks
  REQUIRE(kc::tile_plan(2000, 10000, 32).chunks == 3);  // enough blocks, but no chunk over 4096 rows
  fold_case<float>(3, 5, 1);
  fold_case<float>(2, 1000, 3);
  fold_case<float>(1, 20000, 1, {{12345, 0.0}});
  fold_case<double>(3, 9000, 2, {{9000 * 2 + 77, NAN}});  // NaN in one column of a split fold
  fold_case<double>(4, 0, 2);                             // empty columns: the identity
  fold_case<int64_t>(2, 513, 3);
  fold_case<int32_t>(1, 17000, 1);
  fold_case<float>(2, 300, 1, {{5, INFINITY}, {310, -INFINITY}, {311, NAN}});
  // Wide inner axes: tiles of adjacent columns (a partial last tile), in one
  // pass or chunked (the last chunk shorter), NaN and infinities in a column.
  fold_case<float>(3, 100, 17);
  fold_case<float>(1, 3000, 40, {{7 * 40 + 33, NAN}, {2999 * 40 + 1, INFINITY}});
  fold_case<double>(2, 1100, 16);
  fold_case<int64_t>(1, 700, 33);
  fold_case<int32_t>(2, 300, 64);
  fold_case<double>(2, 0, 20);  // empty columns: the identity
  half_fold_case<__nv_bfloat16>(DType::BFloat16, 1, 3000, 40);  // 16-bit inputs, tiled and strided
  half_fold_case<__half>(DType::Float16, 2, 500, 24);
  half_fold_case<__nv_bfloat16>(DType::BFloat16, 3, 9000, 1);
  half_fold_case<__half>(DType::Float16, 2, 300, 3);
  prod_case<float>(1, 600, 20);
  prod_case<float>(2, 700, 3);
  prod_case<double>(1, 10000, 1);
  prod_case<int64_t>(3, 40, 1);
}

TEST_CASE("var / std / logsumexp / norm / prod backward kernels (host emulation) against the CPU", "[emulation]") {
  stats_case<float>(3, 7, 1);
  stats_case<float>(2, 1000, 3);
  stats_case<double>(2, 300, 1, {{3, 0.0}, {4, 0.0}});
  stats_case<double>(1, 1, 1);
  stats_case<float>(3, 20, 1, {{0, NAN}, {20, -INFINITY}, {41, INFINITY}});
  std::vector<std::pair<int64_t, double>> minus_inf;
  for (int64_t r = 0; r < 20; ++r) minus_inf.push_back({r, -INFINITY});
  stats_case<double>(2, 20, 1, minus_inf);  // a column of -inf
}

TEST_CASE("argmax / argmin kernel (host emulation): ties to the lower index, NaN first", "[emulation]") {
  arg_case<float>(3, 5, 1);
  arg_case<float>(2, 1000, 3);
  arg_case<double>(1, 700, 1, {{400, NAN}, {650, NAN}});
  arg_case<int64_t>(2, 300, 2);
  arg_case<int32_t>(3, 33, 1);
  arg_case<uint8_t>(1, 600, 1);
  arg_case<float>(2, 10, 1, {{3, INFINITY}, {12, -INFINITY}});
}

TEST_CASE("split var / logsumexp / norm (host emulation): partials then a merge, against the CPU", "[emulation]") {
  REQUIRE(kc::fold_plan(1, 8192).chunks == 1);  // the boundary: one block per column
  REQUIRE(kc::fold_plan(1, 8193).chunks == 3);
  REQUIRE(kc::fold_plan(3, 9000).chunks == 3);
  REQUIRE(kc::fold_plan(300, 9000).chunks == 3);
  REQUIRE(kc::fold_plan(600, 9000).chunks == 1);
  stats_case<float>(1, 8192, 1, {}, 0.5, false);
  stats_case<float>(1, 8193, 1, {}, 0.5, false);
  stats_case<double>(1, 4096 * 5 + 1, 1, {}, 0.5, false);
  stats_case<double>(1, 9000, 1, {}, 1e6, false);  // a large mean: Chan's merge keeps var's accuracy
  stats_case<float>(3, 9000, 1, {}, 0.5, false);
  stats_case<double>(2, 9000, 2, {}, 0.5, false);  // inner > 1
  // NaN / +inf / -inf in one chunk of a split column; a column all -inf.
  stats_case<double>(3, 8200, 1, {{5000, NAN}, {8200 + 7000, INFINITY}, {2 * 8200 + 3, -INFINITY}}, 0.5, false);
  stats_case<float>(2, 8200, 1, {{8200 + 8199, -INFINITY}, {100, INFINITY}, {101, -INFINITY}}, 0.5, false);
  std::vector<std::pair<int64_t, double>> minus_inf;
  for (int64_t r = 0; r < 8300; ++r) minus_inf.push_back({r, -INFINITY});
  stats_case<double>(1, 8300, 1, minus_inf, 0.5, false);
}

TEST_CASE("cumsum plans (host emulation): serial, a block per column, chunks", "[emulation]") {
  REQUIRE(kc::cumsum_plan(5, 63, 1).serial);
  REQUIRE(kc::cumsum_plan(20000, 1000, 2).serial);   // many columns, neighbours adjacent
  REQUIRE(kc::cumsum_plan(20000, 500, 1).serial);    // many short rows
  REQUIRE(!kc::cumsum_plan(20000, 1000, 1).serial);  // many long rows: a block each
  REQUIRE((!kc::cumsum_plan(1, 64, 1).serial && kc::cumsum_plan(1, 64, 1).chunks == 1));
  REQUIRE(kc::cumsum_plan(1, 8193, 1).chunks == 3);
  // a block per column, around the tile (256 threads x 8 items) boundaries
  cumsum_case<float>(1, 64, 1);
  cumsum_case<double>(1, 2048, 1);
  cumsum_case<float>(2, 2049, 1);
  cumsum_case<double>(3, 5000, 2);  // inner > 1
  cumsum_case<int64_t>(1, 4097, 1, 1e12);  // large integers: exact
  cumsum_case<int32_t>(2, 300, 3);
  cumsum_case<uint8_t>(1, 1000, 1);
  cumsum_case<int8_t>(1, 700, 1);
  // chunk sums, then a block per chunk
  cumsum_case<float>(1, 8193, 1);
  cumsum_case<double>(1, 4096 * 5 + 100, 1);
  cumsum_case<int64_t>(2, 9000, 1, 1e12);
  cumsum_case<double>(2, 8500, 3);  // inner > 1, 6 columns
}

TEST_CASE("cumsum kernel (host emulation) against the CPU", "[emulation]") {
  cumsum_case<float>(3, 100, 2);
  cumsum_case<double>(1, 1000, 1);
  cumsum_case<int64_t>(2, 50, 3);
}
