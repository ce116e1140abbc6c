#include <ember/cuda/error.h>

#include <ember/core/error.h>
#include <ember/cuda/cuda_api.h>

namespace ember::cuda {

namespace {

// The part of __FILE__ from the source root on ("cuda/copy.cpp").
const char* short_path(const char* file) {
  const std::string f(file);
  const size_t at = f.rfind("/cuda/");
  return at == std::string::npos ? file : file + at + 1;
}

std::string advice(cudaError_t err) {
  switch (err) {
    case cudaErrorMemoryAllocation:
      return "The GPU is out of memory: use a smaller batch, free tensors you no longer need, or call "
             "ember.cuda.empty_cache() to return ember's cached memory.";
    case cudaErrorNoKernelImageForDevice:
      return "This ember build has no GPU code for this GPU's architecture: rebuild with "
             "EMBER_CUDA_ARCHS=<its compute capability, e.g. 90> pip install .";
    case cudaErrorInsufficientDriver:
      return "The NVIDIA driver is older than the CUDA runtime ember was built with: update the driver "
             "(python -m ember.utils.collect_env shows both versions).";
    case cudaErrorNoDevice:
      return "No CUDA GPU is visible: check nvidia-smi and CUDA_VISIBLE_DEVICES.";
    case cudaErrorInvalidDevice:
      return "The device index is out of range: ember.cuda.device_count() tells how many GPUs there are.";
    default:
      return launch_blocking()
                 ? "Errors of kernels are reported synchronously (EMBER_LAUNCH_BLOCKING=1)."
                 : "Kernel errors are reported asynchronously, possibly at a later call than the op that "
                   "caused them: rerun with EMBER_LAUNCH_BLOCKING=1 to find that op.";
  }
}

}  // namespace

void raise_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  cudaGetLastError();  // clears a non-sticky error so later calls can work
  const std::string msg = str("CUDA error: ", cudaGetErrorString(err), " (", cudaGetErrorName(err), ") from ",
                              call, " at ", short_path(file), ":", line, ". ", advice(err));
  if (err == cudaErrorMemoryAllocation) throw OutOfMemoryError(msg);
  throw Error(msg);
}

void raise_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw Error(str("cuBLAS error: ", cublasGetStatusString(status), " from ", call, " at ", short_path(file), ":",
                  line, status == CUBLAS_STATUS_ALLOC_FAILED ? ". The GPU is out of memory." : ""));
}

void check_launch(const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess && launch_blocking()) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) raise_cuda_error(err, "a kernel launch", file, line);
}

}  // namespace ember::cuda
