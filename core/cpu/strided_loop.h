// A plain N-d loop over a shape that walks several operands by their own
// element strides (any sign, zero for broadcast). Used by the index and shape
// kernels, whose element addresses depend on data (indices) or on negative
// strides, so the TensorIterator fast paths do not apply.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include <ember/core/cpu/parallel.h>
#include <ember/core/shape.h>

namespace ember::cpu {

// Calls row(offsets, n, inner_strides) once per innermost row of `shape`:
// offsets[k] is operand k's element offset at the row's start, and the row
// has n elements stepping by inner_strides[k].
template <class F>
void strided_rows(const Shape& shape, const std::vector<Strides>& strides, F&& row) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  const size_t n = strides.size();
  for (int64_t s : shape)
    if (s == 0) return;
  std::vector<int64_t> base(n, 0), counter(nd, 0), inner_stride(n, 0);
  const int64_t inner = nd ? shape[nd - 1] : 1;
  for (size_t k = 0; k < n; ++k) inner_stride[k] = nd ? strides[k][nd - 1] : 0;
  while (true) {
    row(static_cast<const int64_t*>(base.data()), inner, static_cast<const int64_t*>(inner_stride.data()));
    // Advance the odometer over the outer dims.
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      for (size_t k = 0; k < n; ++k) base[k] += strides[k][d];
      if (++counter[d] < shape[d]) break;
      for (size_t k = 0; k < n; ++k) base[k] -= strides[k][d] * shape[d];
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

// strided_rows with the rows split across threads (chunks of at least `grain`
// elements): for kernels whose rows write disjoint outputs. Each chunk starts
// its odometer at its first row.
template <class F>
void strided_rows_parallel(const Shape& shape, const std::vector<Strides>& strides, int64_t grain, const F& row) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  const size_t n = strides.size();
  int64_t rows = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (shape[d] == 0) return;
    if (d < nd - 1) rows *= shape[d];
  }
  const int64_t inner = nd ? shape[nd - 1] : 1;
  std::vector<int64_t> inner_stride(n, 0);
  for (size_t k = 0; k < n; ++k) inner_stride[k] = nd ? strides[k][nd - 1] : 0;
  parallel_for(0, rows, std::max<int64_t>(1, grain / inner), [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> base(n, 0), counter(static_cast<size_t>(nd > 1 ? nd - 1 : 0), 0);
    int64_t rest = r0;
    for (int64_t d = nd - 2; d >= 0; --d) {
      counter[d] = rest % shape[d];
      rest /= shape[d];
      for (size_t k = 0; k < n; ++k) base[k] += counter[d] * strides[k][d];
    }
    for (int64_t r = r0; r < r1; ++r) {
      row(static_cast<const int64_t*>(base.data()), inner, static_cast<const int64_t*>(inner_stride.data()));
      for (int64_t d = nd - 2; d >= 0; --d) {
        for (size_t k = 0; k < n; ++k) base[k] += strides[k][d];
        if (++counter[d] < shape[d]) break;
        for (size_t k = 0; k < n; ++k) base[k] -= strides[k][d] * shape[d];
        counter[d] = 0;
      }
    }
  });
}

// Calls f(offsets) once per element of `shape` in row-major order; offsets[k]
// is the element offset of operand k (sum of index * strides[k]).
template <class F>
void strided_loop(const Shape& shape, const std::vector<Strides>& strides, F&& f) {
  std::vector<int64_t> cur(strides.size());
  strided_rows(shape, strides, [&](const int64_t* base, int64_t n, const int64_t* step) {
    for (size_t k = 0; k < cur.size(); ++k) cur[k] = base[k];
    for (int64_t i = 0; i < n; ++i) {
      f(static_cast<const int64_t*>(cur.data()));
      for (size_t k = 0; k < cur.size(); ++k) cur[k] += step[k];
    }
  });
}

}  // namespace ember::cpu
