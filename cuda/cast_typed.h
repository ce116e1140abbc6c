// Casting copies into one element type. Their explicit instantiations are
// spread over cuda/cast_{float,half,int,byte}.cu so that nvcc compiles them in
// parallel (every dtype pair in one file was one of the build's longest
// steps); cuda/copy.cu dispatches to them. Definition:
// cuda/device/cast_typed.cuh.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <ember/core/dtype.h>
#include <ember/core/tensor_iterator.h>

namespace ember::cuda::cast_typed {

// Operand 0 of `it` (type D: a device element type of cuda/device/dtypes.cuh)
// = operand 1 (dtype `src`) converted element by element.
template <class D>
void cast_to(const TensorIterator& it, DType src);

}  // namespace ember::cuda::cast_typed
