// The unary kernels (cuda/unary_typed.h) of float32 and float64.
#include <ember/cuda/device/unary_typed.cuh>

namespace ember::cuda::unary_typed {

template void run<float>(UnaryOp, const TensorIterator&);
template void run<double>(UnaryOp, const TensorIterator&);

}  // namespace ember::cuda::unary_typed
