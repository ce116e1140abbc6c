// The CUDA index kernels' addressing (cuda/index_layout.h), run on the host:
// merging dims, the 32-bit decision, and the offsets of every element
// against a brute-force walk over the unmerged shape, for random layouts
// (permuted, expanded, flipped) and random indices, negative ones included.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include <ember/cuda/index_layout.h>

#include "catch.h"

using namespace ember;
using namespace ember::cuda;

namespace {

// Strides of a contiguous buffer holding `shape` with its dims stored in a random order.
Strides permuted(const Shape& shape, std::mt19937& rng) {
  std::vector<size_t> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  Strides s(shape.size());
  int64_t step = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    s[*it] = step;
    step *= shape[*it];
  }
  return s;
}

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

struct Case {
  Shape shape;
  std::vector<Strides> strides;               // plain, indexed, indices...
  std::vector<std::vector<int64_t>> index;    // each index's buffer
  std::vector<int64_t> index_strides, sizes;  // per index
};

Case random_case(std::mt19937& rng, int nidx) {
  std::uniform_int_distribution<int> rank(0, 5), size(1, 4), coin(0, 3);
  Case c;
  for (int d = rank(rng); d > 0; --d) c.shape.push_back(size(rng));
  const int64_t n = numel(c.shape);
  for (int t = 0; t < 2 + nidx; ++t) {
    Strides s = permuted(c.shape, rng);
    for (size_t d = 0; d < s.size(); ++d) {
      if (coin(rng) == 0) s[d] = 0;                // expanded (or the indexed dim of a restrided operand)
      else if (t < 2 && coin(rng) == 0) s[d] = -s[d];  // flipped data operands
    }
    c.strides.push_back(s);
  }
  for (int k = 0; k < nidx; ++k) {
    const int64_t dim_size = size(rng) + 1;
    std::uniform_int_distribution<int64_t> value(-dim_size, dim_size - 1);
    std::vector<int64_t> buf(static_cast<size_t>(n));
    for (int64_t& v : buf) v = value(rng);
    c.index.push_back(buf);
    c.sizes.push_back(dim_size);
    c.index_strides.push_back(std::uniform_int_distribution<int64_t>(1, 50)(rng));
  }
  return c;
}

// The offsets of linear index i, walking the unmerged shape.
void reference(const Case& c, int64_t i, int64_t& plain, int64_t& indexed) {
  std::vector<int64_t> off(c.strides.size(), 0);
  for (int64_t d = static_cast<int64_t>(c.shape.size()) - 1; d >= 0; --d) {
    const int64_t coord = i % c.shape[d];
    i /= c.shape[d];
    for (size_t t = 0; t < off.size(); ++t) off[t] += coord * c.strides[t][d];
  }
  plain = off[0];
  indexed = off[1];
  for (size_t k = 0; k < c.index.size(); ++k) {
    int64_t v = c.index[k][off[2 + k]];
    if (v < 0) v += c.sizes[k];
    indexed += v * c.index_strides[k];
  }
}

template <int N, class Index>
void check_offsets(const Case& c) {
  const IndexLayout l = coalesce(c.shape, c.strides);
  REQUIRE(static_cast<int>(l.shape.size()) <= kIndexMaxDims);
  REQUIRE(numel(l.shape) == numel(c.shape));
  std::vector<const int64_t*> data;
  for (const auto& buf : c.index) data.push_back(buf.data());
  const IndexGeometry<N> g = make_geometry<N>(l, data, c.index_strides, c.sizes);
  for (int64_t i = 0; i < numel(c.shape); ++i) {
    int64_t want_plain, want_indexed, plain, indexed;
    reference(c, i, want_plain, want_indexed);
    index_offsets<N, Index>(g, i, plain, indexed);
    INFO("element " << i << " of shape " << shape_str(c.shape) << " merged to " << shape_str(l.shape));
    REQUIRE(plain == want_plain);
    REQUIRE(indexed == want_indexed);
  }
}

}  // namespace

TEST_CASE("index layout merges dims every operand steps through alike", "[cuda_index]") {
  // Contiguous operands (and an index constant along the last two dims).
  IndexLayout l = coalesce({2, 3, 4}, {{12, 4, 1}, {12, 4, 1}, {1, 0, 0}});
  REQUIRE(l.shape == Shape{2, 12});
  REQUIRE(l.strides[0] == Strides{12, 1});
  REQUIRE(l.strides[2] == Strides{1, 0});
  l = coalesce({2, 3, 4}, {{12, 4, 1}, {12, 4, 1}});
  REQUIRE(l.shape == Shape{24});
  // Size-1 dims go; a transposed operand keeps its dims apart.
  l = coalesce({1, 3, 1, 4}, {{99, 4, 7, 1}, {5, 1, 8, 3}});
  REQUIRE(l.shape == Shape{3, 4});
  REQUIRE(l.strides[1] == Strides{1, 3});
  // A view flipped along every dim still walks its storage linearly; one
  // flipped along a single dim does not.
  l = coalesce({3, 4}, {{-4, -1}, {4, 1}});
  REQUIRE(l.shape == Shape{12});
  REQUIRE(l.strides[0] == Strides{-1});
  REQUIRE(l.strides[1] == Strides{1});
  l = coalesce({3, 4}, {{-4, 1}, {4, 1}});
  REQUIRE(l.shape == Shape{3, 4});
  // 0-d and all-ones shapes: nothing to walk.
  REQUIRE(coalesce({}, {{}, {}}).shape.empty());
  REQUIRE(coalesce({1, 1}, {{1, 1}, {1, 1}}).shape.empty());
}

TEST_CASE("index layout takes 32-bit offsets only when they fit", "[cuda_index]") {
  const int64_t max = INT32_MAX;
  REQUIRE(fits_int32(coalesce({1000, 1000}, {{1000, 1}, {1, 1000}}), 1000000));
  REQUIRE_FALSE(fits_int32(coalesce({1000}, {{1}, {1}}), max + 1));
  // The farthest element of the first operand sits at stride + 3.
  REQUIRE(fits_int32(coalesce({2, 4}, {{max - 3, 1}, {4, 1}}), 8));
  REQUIRE_FALSE(fits_int32(coalesce({2, 4}, {{max - 2, 1}, {4, 1}}), 8));
  REQUIRE_FALSE(fits_int32(coalesce({2, 4}, {{-(max - 2), 1}, {4, 1}}), 8));  // magnitudes count
}

TEST_CASE("index offsets match a walk over the unmerged shape", "[cuda_index]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    for (int nidx : {0, 1}) {
      const Case c = random_case(rng, nidx);
      check_offsets<1, int64_t>(c);
      check_offsets<1, int32_t>(c);
      check_offsets<kMaxIndices, int64_t>(c);
    }
    const Case c = random_case(rng, 3);
    check_offsets<kMaxIndices, int64_t>(c);
    check_offsets<kMaxIndices, int32_t>(c);
  }
}
