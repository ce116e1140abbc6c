// The unary kernels (cuda/unary_typed.h) of bool and the integer types.
#include <cstdint>

#include <ember/cuda/device/unary_typed.cuh>

namespace ember::cuda::unary_typed {

template void run<bool>(UnaryOp, const TensorIterator&);
template void run<uint8_t>(UnaryOp, const TensorIterator&);
template void run<int8_t>(UnaryOp, const TensorIterator&);
template void run<int32_t>(UnaryOp, const TensorIterator&);
template void run<int64_t>(UnaryOp, const TensorIterator&);

}  // namespace ember::cuda::unary_typed
