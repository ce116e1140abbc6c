// The binary arithmetic kernels (cuda/binary_typed.h) of float16 and bfloat16,
// computed in float.
#include <ember/cuda/device/binary_typed.cuh>

namespace ember::cuda::binary_typed {

template void run_half<__half>(BinaryOp, const TensorIterator&, const Scalar&);
template void run_half<__nv_bfloat16>(BinaryOp, const TensorIterator&, const Scalar&);

}  // namespace ember::cuda::binary_typed
