// float16 / bfloat16 add, sub, mul and div with a float number operand
// (cuda/binary_typed.h), in their own file so that nvcc builds them beside
// cuda/binary_half.cu.
#include <ember/cuda/device/binary_typed.cuh>

namespace ember::cuda::binary_typed {

template void run_half_number<__half>(BinaryOp, const TensorIterator&, const Scalar&, bool);
template void run_half_number<__nv_bfloat16>(BinaryOp, const TensorIterator&, const Scalar&, bool);

}  // namespace ember::cuda::binary_typed
