// CPU kernels for creation functions.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

void fill(Tensor& t, const Scalar& value);
// t[i] = start + i * step
void arange(Tensor& t, double start, double step);
// t[i] = start + i * step in int64 arithmetic (exact for large integers).
void arange_int(Tensor& t, int64_t start, int64_t step);
// Evenly spaced, with the second half computed from `end` so the last value is
// exact. Floats compute in their own type and integers in double, as torch.
void linspace(Tensor& t, double start, double end);

}  // namespace ember::cpu
