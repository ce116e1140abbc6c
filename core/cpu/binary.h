// CPU kernels for binary elementwise ops (and the ternary ones of the
// family: where, lerp, masked_fill).
#pragma once
#include <ember/core/tensor.h>

namespace ember {

enum class BinaryOp {
  Add, Sub, Mul, Div, DivTrunc, DivFloor, Remainder, Maximum, Minimum,
  Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr, LogicalXor,
  BitwiseAnd, BitwiseOr, BitwiseXor,
};

// Comparisons and logical ops produce bool whatever their input dtype.
inline bool is_bool_result(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::LogicalXor; }

// The ops whose CUDA kernels take a number in float beside a half tensor
// (x * 0.1 multiplies by 0.1f and rounds once, as in PyTorch); other ops take
// the number rounded to the tensor's dtype.
inline bool takes_float_number(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div;
}

namespace cpu {

// out = a op b. a and b share a dtype, broadcast to out's shape; out has that
// dtype too, except for comparisons and logical ops, whose out is bool. For Add
// and Sub, b is scaled by alpha. out may be a or b (in-place ops). Integer
// division or remainder by zero throws after the loop (never a SIGFPE).
void binary(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha);

// Whether every a[i] == b[i], for contiguous a and b of one shape and one
// math dtype (float compares: NaN differs from itself, -0.0 equals 0.0).
// Stops at the first block that holds a difference.
bool all_equal(const Tensor& a, const Tensor& b);

// out (bool) = !a, for any dtype of a.
void logical_not(Tensor& out, const Tensor& a);
// out = ~a for integer a; logical not for bool.
void bitwise_not(Tensor& out, const Tensor& a);
// out = cond ? a : b. cond is bool; a, b and out share a dtype.
void where(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
// out = start + weight * (end - start); all floating, one dtype.
void lerp(Tensor& out, const Tensor& start, const Tensor& end, const Tensor& weight);
// out = mask ? value : self. self and out share a dtype; mask is bool.
void masked_fill(Tensor& out, const Tensor& self, const Tensor& mask, const Scalar& value);

}  // namespace cpu
}  // namespace ember
