// Checks of CUDA calls (CUDA build only). Every runtime call goes through
// EMBER_CUDA_CHECK, which raises ember::Error naming the call, its file and
// line, CUDA's description, and what usually fixes it; every kernel launch is
// followed by EMBER_CUDA_KERNEL_CHECK().
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace ember::cuda {

[[noreturn]] void raise_cuda_error(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void raise_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
// cudaGetLastError after a launch; with EMBER_LAUNCH_BLOCKING=1 also waits for
// the kernel so its own errors are reported here.
void check_launch(const char* file, int line);

}  // namespace ember::cuda

#define EMBER_CUDA_CHECK(call)                                                \
  do {                                                                        \
    const cudaError_t ember_err_ = (call);                                    \
    if (ember_err_ != cudaSuccess)                                            \
      ::ember::cuda::raise_cuda_error(ember_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define EMBER_CUBLAS_CHECK(call)                                                   \
  do {                                                                             \
    const cublasStatus_t ember_status_ = (call);                                   \
    if (ember_status_ != CUBLAS_STATUS_SUCCESS)                                    \
      ::ember::cuda::raise_cublas_error(ember_status_, #call, __FILE__, __LINE__); \
  } while (0)

#define EMBER_CUDA_KERNEL_CHECK() ::ember::cuda::check_launch(__FILE__, __LINE__)
