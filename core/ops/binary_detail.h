// Pieces the binary family's front-end files share (binary.cpp,
// binary_select.cpp, binary_inplace.cpp): argument checks and result types,
// so out-of-place and in-place forms accept and reject the same inputs.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <ember/core/cpu/binary.h>
#include <ember/core/tensor.h>

namespace ember::binary_detail {

void check_defined(const char* op, const std::vector<Tensor>& inputs);
// The backends with kernels for this family: the CPU and CUDA.
void check_backend(const char* op, Device dev);

// The backend seam: each kernel runs on its output's device (CPU 0-d
// operands, such as wrapped Python numbers, may accompany CUDA outputs).
namespace kernel {
void binary(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha);
void logical_not(Tensor& out, const Tensor& a);
void bitwise_not(Tensor& out, const Tensor& a);
void where(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void lerp(Tensor& out, const Tensor& start, const Tensor& end, const Tensor& weight);
void masked_fill(Tensor& out, const Tensor& self, const Tensor& mask, const Scalar& value);
}  // namespace kernel

// op(a, b) computed in `dtype` (half types in float32) into a fresh tensor:
// `dtype`, or bool for comparisons and logical ops.
Tensor run_binary(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, DType dtype,
                  const Scalar& alpha = 1);
// self = op(self, other) written straight into self (whose dtype is the
// result dtype; not a half type).
void run_binary_into(BinaryOp op, Tensor& self, const Tensor& other, const Scalar& alpha = 1);

// Result dtypes, after the op's checks (which throw naming `op`).
DType add_type(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha);
DType sub_type(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha);
DType mul_type(const char* op, const Tensor& a, const Tensor& b);
BinaryOp div_kind(const char* op, const std::optional<std::string>& rounding_mode);
DType div_type(const char* op, BinaryOp kind, const Tensor& a, const Tensor& b);
DType remainder_type(const char* op, const Tensor& a, const Tensor& b);
// lerp's dtype (start's), after its checks; weight may be a wrapped number.
DType lerp_type(const char* op, const Tensor& start, const Tensor& end, const Tensor& weight);
// masked_fill's checks; returns the fill value as a Scalar.
Scalar masked_fill_value(const char* op, const Tensor& a, const Tensor& mask, const Tensor& value);

}  // namespace ember::binary_detail
