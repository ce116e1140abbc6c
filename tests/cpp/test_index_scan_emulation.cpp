// The index family's scan kernels (cuda/device/index_scan_kernels.cuh) run on
// the CPU through tests/cpp/cuda_emulation.h: min_max's two passes (with
// fewer blocks than the data needs, as when the 1,024-block cap applies) and
// nonzero's count / write passes over tiles (tile boundaries, empty and full
// tiles, several dimensions), against brute force; the per-tile counts are
// prefix-summed by cumsum's kernels (cuda/device/reduce_kernels.cuh), as
// ember::cumsum runs them on the GPU (a block-wide scan from 64 tiles on).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "catch.h"
#include "cuda_emulation.h"

#include <ember/cuda/device/index_scan_kernels.cuh>
#include <ember/cuda/device/reduce_kernels.cuh>

namespace {

namespace kc = ember::cuda;

// cuda/index.cu's min_max(): per-block partials, then one block over them.
std::pair<int64_t, int64_t> emulated_min_max(const std::vector<int64_t>& x, int64_t max_blocks) {
  const int64_t n = static_cast<int64_t>(x.size());
  const int64_t b = (n + kc::kScanThreads - 1) / kc::kScanThreads;
  const int blocks = static_cast<int>(std::min(b, max_blocks));
  std::vector<int64_t> s(2 * blocks + 2, 12345);
  launch(blocks, kc::kScanThreads, 0, [&] { kc::min_max_kernel(x.data(), x.data(), n, s.data(), s.data() + blocks); });
  launch(1, kc::kScanThreads, 0, [&] {
    kc::min_max_kernel(s.data(), s.data() + blocks, blocks, s.data() + 2 * blocks, s.data() + 2 * blocks + 1);
  });
  return {s[2 * blocks], s[2 * blocks + 1]};
}

// cuda/index.cu's count_tiles() and nonzero(): coordinates, row-major.
std::vector<int64_t> emulated_nonzero(const std::vector<uint8_t>& flags, const std::vector<int64_t>& shape) {
  const int64_t n = static_cast<int64_t>(flags.size());
  const int64_t tiles = (n + kc::kTile - 1) / kc::kTile;
  std::vector<int64_t> counts(tiles, -1), ends(tiles);
  launch(static_cast<unsigned>(tiles), kc::kScanThreads, 0, [&] { kc::count_tiles_kernel(flags.data(), n, counts.data()); });
  // ember::cumsum(counts, 0): cuda/reduce.cu's cumsum with one column.
  const kc::ScanPlan plan = kc::cumsum_plan(1, tiles, 1);
  if (plan.serial) {
    launch(1, 64, 0, [&] { kc::cumsum_kernel<int64_t, int64_t>(counts.data(), ends.data(), 1, tiles, 1); });
  } else {
    REQUIRE(plan.chunks == 1);  // chunk sums from 8,193 tiles (33M elements) on: too slow here
    launch(1, kc::kReduceThreads, 0, [&] {
      kc::cumsum_block_kernel<int64_t, int64_t>(counts.data(), ends.data(), nullptr, 1, tiles, 1, plan.chunk, 1);
    });
  }
  const int64_t total = tiles > 0 ? ends[static_cast<size_t>(tiles - 1)] : 0;
  std::vector<int64_t> out(static_cast<size_t>(total * static_cast<int64_t>(shape.size())), -1);
  if (total == 0) return out;
  kc::Coords g{};
  g.ndim = static_cast<int>(shape.size());
  for (int d = 0; d < g.ndim; ++d) g.shape[d] = shape[d];
  launch(static_cast<unsigned>(tiles), kc::kScanThreads, 0, [&] {
    kc::write_nonzero_kernel(flags.data(), n, counts.data(), ends.data(), g, out.data());
  });
  return out;
}

void nonzero_case(const std::vector<int64_t>& shape, double density, unsigned seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  INFO("nonzero n " << n << " dims " << shape.size() << " density " << density);
  std::mt19937 rng(seed);
  std::vector<uint8_t> flags(static_cast<size_t>(n));
  for (auto& f : flags) f = std::uniform_real_distribution<double>(0, 1)(rng) < density ? 1 : 0;
  if (n > 5000) std::fill(flags.begin() + 4096, flags.begin() + 2 * 4096, uint8_t{0});  // an empty tile
  std::vector<int64_t> want;
  for (int64_t i = 0; i < n; ++i) {
    if (!flags[i]) continue;
    std::vector<int64_t> c(shape.size());
    int64_t rest = i;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) c[d] = rest % shape[d], rest /= shape[d];
    want.insert(want.end(), c.begin(), c.end());
  }
  REQUIRE(emulated_nonzero(flags, shape) == want);
}

}  // namespace

TEST_CASE("index min_max kernel (host emulation) against brute force", "[emulation]") {
  std::mt19937 rng(3);
  for (int64_t n : {1, 255, 257, 20000, 70000}) {
    for (int64_t cap : {int64_t{1024}, int64_t{5}}) {  // cap 5: grid-stride, as past 1,024 blocks
      if (n > 50000 && cap > 5) continue;  // the large case only grid-strides (keeps the test fast)
      INFO("n " << n << " cap " << cap);
      std::vector<int64_t> x(static_cast<size_t>(n));
      for (auto& v : x) v = static_cast<int64_t>(rng() % 2000001) - 1000000;
      x[rng() % n] = int64_t{1} << 40;  // beyond 32 bits
      const auto [lo, hi] = emulated_min_max(x, cap);
      REQUIRE(lo == *std::min_element(x.begin(), x.end()));
      REQUIRE(hi == *std::max_element(x.begin(), x.end()));
    }
  }
}

TEST_CASE("nonzero tile kernels (host emulation) against brute force", "[emulation]") {
  REQUIRE(kc::kTile == 4096);
  nonzero_case({1}, 1.0, 1);
  nonzero_case({4095}, 0.5, 2);
  nonzero_case({4096}, 1.0, 3);         // one full tile
  nonzero_case({4097}, 0.3, 4);         // one element in the second tile
  nonzero_case({5, 7, 300}, 0.2, 5);    // 10,500 elements: three tiles, one empty, 3-D coordinates
  nonzero_case({3, 4000}, 0.0, 6);      // nothing
  nonzero_case({2, 3, 2, 1000}, 0.9, 7);
  REQUIRE(!kc::cumsum_plan(1, 70, 1).serial);
  nonzero_case({70, 4096}, 0.05, 8);        // 70 tiles: their counts scanned by a block
  nonzero_case({3, 100000}, 0.001, 9);      // 74 tiles, the last partial
}
