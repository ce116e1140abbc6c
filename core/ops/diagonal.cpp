// diag, trace and the triangle indices: compositions of the diagonal view
// (core/ops/shape.cpp) and diag_embed (core/ops/view_scatter.cpp).
#include <ember/core/ops/diagonal.h>

#include <algorithm>
#include <vector>

#include <ember/core/error.h>
#include <ember/core/ops/reduce.h>

namespace ember {

Tensor diag(const Tensor& x, int64_t offset) {
  EMBER_CHECK(x.dim() == 1 || x.dim() == 2, Error, "diag: expected a 1-D or 2-D tensor, got shape ",
              shape_str(x.shape()));
  if (x.dim() == 1) return diag_embed(x, offset, 0, 1);
  return diagonal(x, offset, 0, 1).clone();
}

Tensor trace(const Tensor& x) {
  EMBER_CHECK(x.dim() == 2, Error, "trace: expected a matrix, got shape ", shape_str(x.shape()));
  return sum(diagonal(x, 0, 0, 1));
}

namespace {

// Row-major (row, col) pairs with col - row <= offset (lower) or >= offset (upper).
Tensor triangle_indices(const char* op, int64_t rows, int64_t cols, int64_t offset, bool lower, DType dtype,
                        Device device) {
  EMBER_CHECK(rows >= 0 && cols >= 0, Error, op, ": row and col must be non-negative, got ", rows, " and ", cols);
  EMBER_CHECK(dtype == DType::Int64 || dtype == DType::Int32, Error, op, ": dtype must be int64 or int32, got ",
              dtype_name(dtype));
  std::vector<int64_t> r, c;
  for (int64_t i = 0; i < rows; ++i) {
    // The columns of row i in the triangle: [0, i + offset] or [i + offset, cols).
    const int64_t begin = lower ? 0 : std::max<int64_t>(0, i + offset);
    const int64_t end = lower ? std::min(cols, i + offset + 1) : cols;
    for (int64_t j = begin; j < end; ++j) {
      r.push_back(i);
      c.push_back(j);
    }
  }
  const int64_t n = static_cast<int64_t>(r.size());
  Tensor out = empty({2, n}, DType::Int64);
  std::copy(r.begin(), r.end(), out.data<int64_t>());
  std::copy(c.begin(), c.end(), out.data<int64_t>() + n);
  return out.to(device, dtype);
}

}  // namespace

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, DType dtype, Device device) {
  return triangle_indices("tril_indices", row, col, offset, true, dtype, device);
}

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, DType dtype, Device device) {
  return triangle_indices("triu_indices", row, col, offset, false, dtype, device);
}

}  // namespace ember
