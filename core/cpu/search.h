// searchsorted on the CPU: a binary search per value.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// out[r, j] (int64, [rows, m]) = the number of elements of the sorted row
// seq[r] (seq [rows, n], or one shared row when seq_rows == 1) below
// values[r, j] (below or equal with `right`); NaN values give n (NaN sorts
// last). seq and values contiguous, of one real dtype.
void searchsorted(Tensor& out, const Tensor& seq, const Tensor& values, int64_t seq_rows, int64_t rows, int64_t n,
                  int64_t m, bool right);

}  // namespace ember::cpu
