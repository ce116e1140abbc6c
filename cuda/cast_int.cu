// The casting copies (cuda/cast_typed.h) into 32- and 64-bit integers.
#include <cstdint>

#include <ember/cuda/device/cast_typed.cuh>

namespace ember::cuda::cast_typed {

template void cast_to<int32_t>(const TensorIterator&, DType);
template void cast_to<int64_t>(const TensorIterator&, DType);

}  // namespace ember::cuda::cast_typed
