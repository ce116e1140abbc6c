// The binary kernels (cuda/binary_typed.h) of 32- and 64-bit integers.
#include <cstdint>

#include <ember/cuda/device/binary_typed.cuh>

namespace ember::cuda::binary_typed {

template void run<int32_t>(BinaryOp, const TensorIterator&, const Scalar&);
template void run<int64_t>(BinaryOp, const TensorIterator&, const Scalar&);

}  // namespace ember::cuda::binary_typed
