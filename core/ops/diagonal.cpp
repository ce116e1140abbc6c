// diag, trace and the triangle indices: compositions of the diagonal view
// (core/ops/shape.cpp) and diag_embed (core/ops/view_scatter.cpp).
#include <ember/core/ops/diagonal.h>

#include <algorithm>
#include <limits>

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

// Sum over rows i in [0, rows) of clamp(i + k, 0, cols): the column count of
// each row of a lower triangle (k = offset + 1), in closed form so that huge
// sizes are refused before anything is allocated.
__int128 clamped_ramp_sum(int64_t rows, int64_t cols, __int128 k) {
  const __int128 ramp_begin = std::clamp<__int128>(-k, 0, rows);                // rows before have no columns
  const __int128 ramp_end = std::clamp<__int128>(cols - k, ramp_begin, rows);  // rows from here have all
  const __int128 ramp_rows = ramp_end - ramp_begin;
  const __int128 ramp = ramp_rows * k + (ramp_begin + ramp_end - 1) * ramp_rows / 2;
  return ramp + (rows - ramp_end) * cols;
}

// Row-major (row, col) pairs with col - row <= offset (lower) or >= offset (upper).
Tensor triangle_indices(const char* op, int64_t rows, int64_t cols, int64_t offset, bool lower, DType dtype,
                        Device device) {
  EMBER_CHECK(rows >= 0 && cols >= 0, Error, op, ": row and col must be non-negative, got ", rows, " and ", cols);
  EMBER_CHECK(dtype == DType::Int64 || dtype == DType::Int32, Error, op, ": dtype must be int64 or int32, got ",
              dtype_name(dtype));
  const __int128 count = lower ? clamped_ramp_sum(rows, cols, static_cast<__int128>(offset) + 1)
                               : static_cast<__int128>(rows) * cols - clamped_ramp_sum(rows, cols, offset);
  EMBER_CHECK(count * 2 * 8 <= std::numeric_limits<int64_t>::max(), Error, op,
              ": storage size calculation overflowed: ", rows, " x ", cols, " with offset ", offset,
              " has too many indices");
  const int64_t n = static_cast<int64_t>(count);
  Tensor out = empty({2, n}, DType::Int64);
  int64_t* r = out.data<int64_t>();
  int64_t* c = r + n;
  // Only the rows that hold indices are walked (rows may be huge while n is small):
  // a lower triangle's empty rows come first, an upper one's last.
  const __int128 off = offset;
  const int64_t first = n == 0 ? rows : lower ? static_cast<int64_t>(std::clamp<__int128>(-(off + 1), 0, rows)) : 0;
  const int64_t last = n == 0 || lower ? rows : static_cast<int64_t>(std::clamp<__int128>(cols - off, 0, rows));
  for (int64_t i = first; i < last; ++i) {
    // The columns of row i in the triangle: [0, i + offset] or [i + offset, cols).
    const int64_t begin = lower ? 0 : static_cast<int64_t>(std::clamp<__int128>(i + off, 0, cols));
    const int64_t end = lower ? static_cast<int64_t>(std::clamp<__int128>(i + off + 1, 0, cols)) : cols;
    for (int64_t j = begin; j < end; ++j) {
      *r++ = i;
      *c++ = j;
    }
  }
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
