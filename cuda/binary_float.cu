// The binary kernels (cuda/binary_typed.h) of float32 and float64.
#include <ember/cuda/device/binary_typed.cuh>

namespace ember::cuda::binary_typed {

template void run<float>(BinaryOp, const TensorIterator&, const Scalar&);
template void run<double>(BinaryOp, const TensorIterator&, const Scalar&);

}  // namespace ember::cuda::binary_typed
