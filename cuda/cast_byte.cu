// The casting copies (cuda/cast_typed.h) into bool and the 8-bit integers.
#include <cstdint>

#include <ember/cuda/device/cast_typed.cuh>

namespace ember::cuda::cast_typed {

template void cast_to<bool>(const TensorIterator&, DType);
template void cast_to<uint8_t>(const TensorIterator&, DType);
template void cast_to<int8_t>(const TensorIterator&, DType);

}  // namespace ember::cuda::cast_typed
