// A plain N-d loop over a shape that walks several operands by their own
// element strides (any sign, zero for broadcast). Used by the index and shape
// kernels, whose element addresses depend on data (indices) or on negative
// strides, so the TensorIterator fast paths do not apply.
#pragma once
#include <cstdint>
#include <vector>

#include <ember/core/shape.h>

namespace ember::cpu {

// Calls f(offsets) once per element of `shape` in row-major order; offsets[k]
// is the element offset of operand k (sum of index * strides[k]).
template <class F>
void strided_loop(const Shape& shape, const std::vector<Strides>& strides, F&& f) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  const size_t n = strides.size();
  for (int64_t s : shape)
    if (s == 0) return;
  std::vector<int64_t> base(n, 0), cur(n, 0), counter(nd, 0);
  const int64_t inner = nd ? shape[nd - 1] : 1;
  std::vector<int64_t> inner_stride(n, 0);
  for (size_t k = 0; k < n; ++k) inner_stride[k] = nd ? strides[k][nd - 1] : 0;
  while (true) {
    for (size_t k = 0; k < n; ++k) cur[k] = base[k];
    for (int64_t i = 0; i < inner; ++i) {
      f(static_cast<const int64_t*>(cur.data()));
      for (size_t k = 0; k < n; ++k) cur[k] += inner_stride[k];
    }
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

}  // namespace ember::cpu
