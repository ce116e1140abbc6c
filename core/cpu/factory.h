// CPU kernels for creation functions.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

void fill(Tensor& t, const Scalar& value);
// t[i] = start + i * step
void arange(Tensor& t, double start, double step);
// Evenly spaced, with the second half computed from `end` so the last value is exact.
void linspace(Tensor& t, double start, double end, double step);

}  // namespace ember::cpu
