// The binary arithmetic and comparison kernels of one element type. Their
// explicit instantiations are spread over
// cuda/binary_{float,half,half_number,int,byte}.cu so that nvcc compiles them
// in parallel (in one file they were the build's longest step); cuda/binary.cu
// dispatches to them. Definitions: cuda/device/binary_typed.cuh.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <ember/core/cpu/binary.h>
#include <ember/core/scalar.h>
#include <ember/core/tensor_iterator.h>

namespace ember::cuda::binary_typed {

// Operands 1 and 2 of `it` are of type T (bool, an integer type, float or
// double); operand 0 is bool for a comparison and T otherwise.
template <class T>
void run(BinaryOp op, const TensorIterator& it, const Scalar& alpha);

// Arithmetic (not comparisons) on float16 (S = __half) or bfloat16 (S =
// __nv_bfloat16) operands, computed in float.
template <class S>
void run_half(BinaryOp op, const TensorIterator& it, const Scalar& alpha);

// An op that takes_float_number (core/cpu/binary.h) on a half tensor (S) and
// a number kept in float: operand 1 (number_first) or 2 is a float32 CPU number.
template <class S>
void run_half_number(BinaryOp op, const TensorIterator& it, const Scalar& alpha, bool number_first);

}  // namespace ember::cuda::binary_typed
