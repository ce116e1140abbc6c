// The unary kernels (cuda/unary_typed.h) of float16 and bfloat16, computed in float.
#include <ember/cuda/device/unary_typed.cuh>

namespace ember::cuda::unary_typed {

template void run_half<__half>(UnaryOp, const TensorIterator&);
template void run_half<__nv_bfloat16>(UnaryOp, const TensorIterator&);

}  // namespace ember::cuda::unary_typed
