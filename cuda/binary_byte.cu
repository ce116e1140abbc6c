// The binary kernels (cuda/binary_typed.h) of bool and the 8-bit integers.
#include <cstdint>

#include <ember/cuda/device/binary_typed.cuh>

namespace ember::cuda::binary_typed {

template void run<bool>(BinaryOp, const TensorIterator&, const Scalar&);
template void run<uint8_t>(BinaryOp, const TensorIterator&, const Scalar&);
template void run<int8_t>(BinaryOp, const TensorIterator&, const Scalar&);

}  // namespace ember::cuda::binary_typed
