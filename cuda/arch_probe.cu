// A kernel that does nothing, compiled for the build's architectures: asking
// CUDA for its attributes on a device fails with cudaErrorNoKernelImageForDevice
// exactly when no SASS or PTX of this build can run there.
#include <ember/cuda/context.h>

namespace ember::cuda {

namespace {
__global__ void probe_kernel() {}
}  // namespace

cudaError_t probe_kernel_image(int index) {
  DeviceGuard guard(index);
  cudaFuncAttributes attrs;
  const cudaError_t err = cudaFuncGetAttributes(&attrs, probe_kernel);
  if (err != cudaSuccess) cudaGetLastError();
  return err;
}

}  // namespace ember::cuda
