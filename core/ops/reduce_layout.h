// Internal to the reduce family's front-ends (core/ops/reduce*.cpp): the
// geometry of a reduction and the contiguous [outer, reduced, inner] layout
// the CPU kernels consume.
#pragma once
#include <ember/core/tensor.h>

namespace ember::reduce_detail {

// Result geometry of reducing `dims` of x (empty dims: all of them).
struct ReducedShape {
  Shape out_shape;   // keepdim applied
  Shape keep_shape;  // reduced dims kept as 1
  int64_t count = 1; // elements reduced into each output
  Dims kept, reduced;
};
ReducedShape reduced_shape(const Tensor& x, const Dims& dims, bool keepdim, const char* op);

// x (detached) laid out contiguous so the reduced dims form the middle of
// [outer, reduced, inner], converted to `dtype`.
struct Layout {
  Tensor input;
  int64_t outer = 1, reduced = 1, inner = 1;
};
Layout layout_for(const Tensor& x, const ReducedShape& r, DType dtype);

// Throws IndexError "<op>(): Expected reduction dim d to have non-zero size."
// for reductions without an identity (max, min, argmax, inf-norm).
void check_nonempty(const Tensor& x, const ReducedShape& r, const Dims& dims, const char* op);

// CPU-only check shared by the front-ends until the CUDA kernels land.
void check_cpu(const Tensor& x, const char* op);

// dtype kernels compute in: float32 for the half types (storage only on the CPU).
inline DType compute_dtype(DType t) { return is_half(t) ? DType::Float32 : t; }

}  // namespace ember::reduce_detail
