// The addressing of the CUDA index kernels (cuda/index.cu): the iteration
// shape with dims merged where every operand steps through them alike, the
// by-value geometry a kernel receives, and the offsets one element reads and
// writes. No CUDA includes: the host compiler builds it too, so the C++ tests
// (tests/cpp/test_cuda_index_layout.cpp) check it on machines without a GPU.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include <ember/core/host_device.h>
#include <ember/core/shape.h>

namespace ember::cuda {

constexpr int kIndexMaxDims = 16;  // dims of an iteration shape after merging
constexpr int kMaxIndices = 16;    // index tensors of one advanced indexing

// Operand 0 is the side addressed plainly (gather's out, scatter's values),
// operand 1 the side the indices address (gather's src, scatter's dst),
// operand 2 + k index k. Strides in elements; unused entries are zero. N is
// the most index tensors the kernel handles (1 or kMaxIndices).
template <int N>
struct IndexGeometry {
  int ndim;
  int nidx;
  int64_t shape[kIndexMaxDims];
  int64_t strides[2 + N][kIndexMaxDims];
  const int64_t* index[N];
  int64_t index_stride[N];
  int64_t index_size[N];
};

// A shape and every operand's strides over it.
struct IndexLayout {
  Shape shape;
  std::vector<Strides> strides;  // per operand
};

// Size-1 dims dropped; a dim merged into the one before it when every
// operand's outer stride is its stride times its size.
inline IndexLayout coalesce(const Shape& shape, const std::vector<Strides>& strides) {
  IndexLayout l;
  l.strides.resize(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !l.shape.empty();
    for (size_t t = 0; merge && t < strides.size(); ++t) merge = l.strides[t].back() == strides[t][d] * shape[d];
    if (merge) {
      l.shape.back() *= shape[d];
      for (size_t t = 0; t < strides.size(); ++t) l.strides[t].back() = strides[t][d];
    } else {
      l.shape.push_back(shape[d]);
      for (size_t t = 0; t < strides.size(); ++t) l.strides[t].push_back(strides[t][d]);
    }
  }
  return l;
}

// Whether n elements and every operand's offsets over l (before the indices
// add theirs, which are computed in 64 bits) fit in int32.
inline bool fits_int32(const IndexLayout& l, int64_t n) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (n > kMax) return false;
  for (const Strides& s : l.strides) {
    int64_t extent = 0;
    for (size_t d = 0; d < l.shape.size(); ++d) extent += (s[d] < 0 ? -s[d] : s[d]) * (l.shape[d] - 1);
    if (extent > kMax) return false;
  }
  return true;
}

// The kernel's geometry for l (operands: plain, indexed, then one per index)
// and the indices' data, strides along the indexed dims and those dims' sizes.
// The caller checks the limits (kIndexMaxDims, at most N indices).
template <int N>
IndexGeometry<N> make_geometry(const IndexLayout& l, const std::vector<const int64_t*>& index_data,
                               const std::vector<int64_t>& index_strides, const std::vector<int64_t>& sizes) {
  IndexGeometry<N> g{};
  g.ndim = static_cast<int>(l.shape.size());
  g.nidx = static_cast<int>(index_data.size());
  for (int d = 0; d < g.ndim; ++d) {
    g.shape[d] = l.shape[d];
    for (size_t t = 0; t < l.strides.size(); ++t) g.strides[t][d] = l.strides[t][d];
  }
  for (int k = 0; k < g.nidx; ++k) {
    g.index[k] = index_data[k];
    g.index_stride[k] = index_strides[k];
    g.index_size[k] = sizes[k];
  }
  return g;
}

// The element offsets of linear index i (row-major over g's shape): `plain`
// in operand 0, `indexed` in operand 1 plus each index's value (negative
// values wrapped by the dim's size; the range was checked) times its stride.
// Index (int32_t or int64_t) is the type of the per-dim arithmetic.
template <int N, class Index>
EMBER_HOST_DEVICE inline void index_offsets(const IndexGeometry<N>& g, int64_t i, int64_t& plain, int64_t& indexed) {
  Index rest = static_cast<Index>(i);
  Index off[2 + N];
  EMBER_UNROLL
  for (int t = 0; t < 2 + N; ++t) off[t] = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const Index size = static_cast<Index>(g.shape[d]);
    const Index c = rest % size;
    rest /= size;
    EMBER_UNROLL
    for (int t = 0; t < 2 + N; ++t) off[t] += c * static_cast<Index>(g.strides[t][d]);
  }
  int64_t target = off[1];
  EMBER_UNROLL
  for (int k = 0; k < N; ++k) {
    if (k < g.nidx) {
      int64_t v = g.index[k][off[2 + k]];
      if (v < 0) v += g.index_size[k];
      target += v * g.index_stride[k];
    }
  }
  plain = off[0];
  indexed = target;
}

}  // namespace ember::cuda
