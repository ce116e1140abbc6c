// The plain unary kernels (cuda/unary.h's unary()) of one element type. Their
// explicit instantiations are spread over cuda/unary_{float,half,int}.cu so
// that nvcc compiles them in parallel; cuda/unary.cu dispatches to them.
// Definitions: cuda/device/unary_typed.cuh.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <ember/core/cpu/unary.h>
#include <ember/core/tensor_iterator.h>

namespace ember::cuda::unary_typed {

// Operands 0 and 1 of `it` are of type T (bool, an integer type, float or double).
template <class T>
void run(UnaryOp op, const TensorIterator& it);

// float16 (S = __half) or bfloat16 (S = __nv_bfloat16) operands, computed in float.
template <class S>
void run_half(UnaryOp op, const TensorIterator& it);

}  // namespace ember::cuda::unary_typed
