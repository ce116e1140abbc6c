// The casting copies (cuda/cast_typed.h) into float32 and float64.
#include <ember/cuda/device/cast_typed.cuh>

namespace ember::cuda::cast_typed {

template void cast_to<float>(const TensorIterator&, DType);
template void cast_to<double>(const TensorIterator&, DType);

}  // namespace ember::cuda::cast_typed
