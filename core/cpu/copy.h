// CPU kernels for copies between dtypes and layouts.
#pragma once
#include <ember/core/tensor.h>

namespace ember::cpu {

// dst = cast(src), src broadcast to dst's shape. Both on the CPU.
void copy(Tensor& dst, const Tensor& src);

// The same-dtype copies that only move elements, whatever the dtype (complex
// included): contiguous to contiguous, a transposed matrix, an expanded last
// dim. Returns false, copying nothing, for any other layout. dst non-empty.
bool copy_layout(Tensor& dst, const Tensor& src);

}  // namespace ember::cpu
