// Internal to the reduce family's front-ends (core/ops/reduce*.cpp): the
// geometry of a reduction and the contiguous [outer, reduced, inner] layout
// the CPU kernels consume.
#pragma once
#include <ember/core/cpu/reduce.h>
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

// A defined tensor on a device with reduction kernels (the CPU or CUDA).
void check_backend(const Tensor& x, const char* op);

// The backend seam: each kernel runs on its input's device (core/cpu/reduce.h
// and cuda/reduce.h have the same signatures).
namespace kernel {
void reduce(ReduceOp op, Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);
void var(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner, double correction,
         bool take_sqrt);
void norm(Tensor& out, const Tensor& x, double p, int64_t outer, int64_t reduced, int64_t inner);
void logsumexp(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);
void arg_reduce(bool is_max, Tensor& values, Tensor& indices, const Tensor& x, int64_t outer, int64_t reduced,
                int64_t inner);
void cumsum(Tensor& out, const Tensor& x, int64_t outer, int64_t length, int64_t inner);
void prod_others(Tensor& out, const Tensor& x, int64_t outer, int64_t reduced, int64_t inner);
void grad_coeff(GradCoeff kind, Tensor& out, const Tensor& a, const Tensor& b, double p);
}  // namespace kernel

// dtype kernels compute in: float32 for the half types (storage only on the CPU).
inline DType compute_dtype(DType t) { return is_half(t) ? DType::Float32 : t; }

}  // namespace ember::reduce_detail
