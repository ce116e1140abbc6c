// The casting copies (cuda/cast_typed.h) into float16 and bfloat16.
#include <ember/cuda/device/cast_typed.cuh>

namespace ember::cuda::cast_typed {

template void cast_to<__half>(const TensorIterator&, DType);
template void cast_to<__nv_bfloat16>(const TensorIterator&, DType);

}  // namespace ember::cuda::cast_typed
