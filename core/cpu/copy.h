// CPU kernels for copies between dtypes and layouts.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// dst = cast(src), src broadcast to dst's shape. Both on the CPU.
void copy(Tensor& dst, const Tensor& src);

}  // namespace ember::cpu
