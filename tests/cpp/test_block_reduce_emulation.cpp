// cuda/device/block_reduce.cuh (the warp-shuffle and block reductions of the
// reduce, softmax, norm and loss kernels) run on the CPU through
// tests/cpp/cuda_emulation.h: every block size from one warp to 1024
// threads, every thread's result, the shared buffer reused right away, NaN
// against MaxOp, bool and 64-bit values, and a user struct with its own
// shfl_down overload.
#include <cmath>
#include <limits>
#include <vector>

#include "catch.h"
#include "cuda_emulation.h"

#include <ember/cuda/device/block_reduce.cuh>

namespace {

using ember::cuda::kMaxWarps;

// Runs block_reduce over one value per thread in each of `blocks` blocks;
// returns every thread's result (block-major).
template <class T, class Op>
std::vector<T> block_results(unsigned blocks, unsigned threads, const std::vector<T>& values, Op op) {
  std::vector<T> got(size_t{blocks} * threads);
  launch(blocks, threads, 0, [&] {
    __shared__ T shared[kMaxWarps];
    const size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
    got[i] = ember::cuda::block_reduce(values[i], op, shared);
  });
  return got;
}

const unsigned kSizes[] = {32, 64, 96, 128, 160, 256, 480, 512, 736, 1024};

template <class T>
void check_sums() {
  for (unsigned threads : kSizes) {
    INFO("threads " << threads);
    const unsigned blocks = 3;
    std::vector<T> v(size_t{blocks} * threads);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>((i * 37) % 101) - static_cast<T>(50);
    const std::vector<T> got = block_results(blocks, threads, v, ember::cuda::SumOp{});
    for (unsigned b = 0; b < blocks; ++b) {
      T expect = 0;  // small integers: exact in every type and order
      for (unsigned t = 0; t < threads; ++t) expect += v[b * threads + t];
      for (unsigned t = 0; t < threads; ++t) REQUIRE(got[b * threads + t] == expect);
    }
  }
}

struct Pair {  // a user type: its own shfl_down, found by argument-dependent lookup
  float v;
  int64_t i;
};
Pair shfl_down(Pair p, int offset) {
  return {ember::cuda::shfl_down(p.v, offset), ember::cuda::shfl_down(p.i, offset)};
}
struct MinPairOp {
  Pair operator()(Pair a, Pair b) const { return (b.v < a.v || (b.v == a.v && b.i < a.i)) ? b : a; }
};

}  // namespace

TEST_CASE("block_reduce (host emulation): sums for every block size, all threads agree", "[emulation]") {
  check_sums<int>();
  check_sums<int64_t>();
  check_sums<float>();
  check_sums<double>();
}

TEST_CASE("block_reduce (host emulation): float sums agree across threads and with a double sum", "[emulation]") {
  for (unsigned threads : {32u, 224u, 1024u}) {
    std::vector<float> v(threads);
    std::mt19937 rng(threads);
    std::normal_distribution<float> normal(0.f, 1.f);
    double ref = 0;
    for (float& x : v) ref += x = normal(rng);
    const std::vector<float> got = block_results(1, threads, v, ember::cuda::SumOp{});
    for (float g : got) REQUIRE(g == got[0]);  // bitwise: every thread folds the partials in one order
    REQUIRE(std::fabs(got[0] - ref) < 1e-4 * threads);
  }
}

TEST_CASE("block_reduce (host emulation): max, MaxOp's and NanMaxOp's NaN rules", "[emulation]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (unsigned threads : {32u, 96u, 512u}) {
    for (unsigned where : {0u, 1u, 17u, 31u, threads - 1}) {
      INFO("threads " << threads << ", NaN at " << where);
      std::vector<float> v(threads);
      for (unsigned t = 0; t < threads; ++t) v[t] = static_cast<float>((t * 13) % 29);
      v[where] = nan;  // "a NaN loses against any number", wherever it sits
      float expect = -INFINITY;
      for (unsigned t = 0; t < threads; ++t) if (t != where) expect = std::max(expect, v[t]);
      for (float g : block_results(1, threads, v, ember::cuda::MaxOp{})) REQUIRE(g == expect);
      for (float g : block_results(1, threads, v, ember::cuda::NanMaxOp{})) REQUIRE(std::isnan(g));  // NaN wins
    }
    std::vector<float> all_nan(threads, nan);
    for (float g : block_results(1, threads, all_nan, ember::cuda::MaxOp{})) REQUIRE(std::isnan(g));
    std::vector<float> all_minus_inf(threads, -INFINITY);
    for (float g : block_results(1, threads, all_minus_inf, ember::cuda::MaxOp{})) REQUIRE(g == -INFINITY);
  }
}

TEST_CASE("block_reduce (host emulation): the shared buffer is reusable right after a call", "[emulation]") {
  // Three reductions in a row through one buffer: without the trailing
  // __syncthreads a fast warp overwrites a partial a slow thread still reads.
  for (unsigned threads : {64u, 256u, 1024u}) {
    INFO("threads " << threads);
    std::vector<int> a(threads), b(threads), c(threads);
    launch(2, threads, 0, [&] {
      __shared__ int shared[kMaxWarps];
      const int t = static_cast<int>(threadIdx.x);
      const int s1 = ember::cuda::block_sum(t, shared);
      const int s2 = ember::cuda::block_sum(1000 * t, shared);
      const int s3 = ember::cuda::block_max(t % 7 == 3 ? t : 0, shared);
      if (blockIdx.x == 0) a[t] = s1, b[t] = s2, c[t] = s3;
    });
    const int n = static_cast<int>(threads), sum = n * (n - 1) / 2;
    int mx = 0;
    for (int t = 0; t < n; ++t) if (t % 7 == 3) mx = t;
    for (unsigned t = 0; t < threads; ++t) {
      REQUIRE(a[t] == sum);
      REQUIRE(b[t] == 1000 * sum);
      REQUIRE(c[t] == mx);
    }
  }
}

TEST_CASE("block_reduce (host emulation): bool, 64-bit and a struct with its own shfl_down", "[emulation]") {
  for (unsigned threads : {32u, 352u, 1024u}) {
    INFO("threads " << threads);
    std::vector<bool> got_any(threads), got_all(threads);
    std::vector<int64_t> got_big(threads);
    std::vector<Pair> got_min(threads);
    launch(1, threads, 0, [&] {
      __shared__ bool flags[kMaxWarps];
      __shared__ int64_t big[kMaxWarps];
      __shared__ Pair pairs[kMaxWarps];
      const unsigned t = threadIdx.x;
      got_any[t] = ember::cuda::block_reduce(t == threads - 1, [](bool x, bool y) { return x || y; }, flags);
      got_all[t] = ember::cuda::block_reduce(t != 5, [](bool x, bool y) { return x && y; }, flags);
      got_big[t] = ember::cuda::block_sum(int64_t{1} << 40, big);  // beyond 32 bits
      got_min[t] = ember::cuda::block_reduce(Pair{static_cast<float>((t * 7) % 10), int64_t{t}}, MinPairOp{}, pairs);
    });
    for (unsigned t = 0; t < threads; ++t) {
      REQUIRE(got_any[t]);
      REQUIRE_FALSE(got_all[t]);
      REQUIRE(got_big[t] == int64_t{threads} << 40);
      REQUIRE(got_min[t].v == 0.f);
      REQUIRE(got_min[t].i == 0);  // ties to the lowest index: 0, 10, 20, ... all hold 0
    }
  }
}

TEST_CASE("block_reduce (host emulation): warp_reduce leaves the result in lane 0", "[emulation]") {
  std::vector<float> lane0(4);
  launch(1, 128, 0, [&] {
    const float s = ember::cuda::warp_sum(static_cast<float>(threadIdx.x));
    if (threadIdx.x % 32 == 0) lane0[threadIdx.x / 32] = s;
  });
  for (int w = 0; w < 4; ++w) REQUIRE(lane0[w] == static_cast<float>(32 * 32 * w + 31 * 32 / 2));
}

TEST_CASE("cuda emulation: shuffles follow CUDA's rules for widths and out-of-range lanes", "[emulation]") {
  std::vector<int> down(64), up(64), xr(64), idx(64), down8(64);
  std::vector<unsigned> ballot(64);
  launch(1, 64, 0, [&] {
    const int t = static_cast<int>(threadIdx.x);
    down[t] = __shfl_down_sync(0xffffffffu, t, 5);
    up[t] = __shfl_up_sync(0xffffffffu, t, 3);
    xr[t] = __shfl_xor_sync(0xffffffffu, t, 9);
    idx[t] = __shfl_sync(0xffffffffu, t, 7);
    down8[t] = __shfl_down_sync(0xffffffffu, t, 2, 8);
    ballot[t] = __ballot_sync(0xffffffffu, t % 3 == 0);
  });
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32, warp = t - lane;
    REQUIRE(down[t] == (lane + 5 < 32 ? t + 5 : t));
    REQUIRE(up[t] == (lane >= 3 ? t - 3 : t));
    REQUIRE(xr[t] == warp + (lane ^ 9));
    REQUIRE(idx[t] == warp + 7);
    REQUIRE(down8[t] == (lane % 8 + 2 < 8 ? t + 2 : t));
    unsigned expect = 0;
    for (int l = 0; l < 32; ++l) expect |= ((warp + l) % 3 == 0 ? 1u : 0u) << l;
    REQUIRE(ballot[t] == expect);
  }
}
