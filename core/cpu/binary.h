// CPU kernels for binary elementwise ops.
#pragma once
#include <ember/core/tensor.h>

namespace ember {

enum class BinaryOp {
  Add, Sub, Mul, Div, DivTrunc, DivFloor, Remainder, Maximum, Minimum,
  Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr, LogicalXor,
};

namespace cpu {

// out = a op b. a and b share out's dtype (comparisons and logical ops: a and
// b share a dtype and out is bool), broadcast to out's shape. For Add and Sub,
// b is scaled by alpha.
void binary(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha);

}  // namespace cpu
}  // namespace ember
