// What the cuDNN-backed kernels share (CUDA builds with cuDNN only): error
// checks, the per-device handle, dtype mapping and descriptors that free
// themselves. Include only from cuda/*.cpp compiled with EMBER_HAS_CUDNN.
#pragma once
#include <cudnn.h>

#include <ember/core/tensor.h>

namespace ember::cuda {

[[noreturn]] void raise_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line);

// The device's cuDNN handle, created at first use, bound to its current stream.
cudnnHandle_t cudnn_handle(int index);
// The cuDNN data type of d (float32, float64, float16, bfloat16), else NotImplementedError naming op.
cudnnDataType_t cudnn_data_type(DType d, const char* op);
// The type cuDNN accumulates in for data of type d: double for float64, else float.
cudnnDataType_t cudnn_compute_type(DType d);

// alpha / beta as cuDNN reads them: double for float64 data, else float.
struct ScalingFactor {
  float f;
  double d;
  ScalingFactor(double v) : f(static_cast<float>(v)), d(v) {}
  const void* get(DType data) const { return data == DType::Float64 ? static_cast<const void*>(&d) : &f; }
};

// A contiguous NCHW tensor descriptor.
class TensorDescriptor {
 public:
  TensorDescriptor(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w, const char* op);
  ~TensorDescriptor();
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

}  // namespace ember::cuda

#define EMBER_CUDNN_CHECK(call)                                                   \
  do {                                                                            \
    const cudnnStatus_t ember_cudnn_status_ = (call);                             \
    if (ember_cudnn_status_ != CUDNN_STATUS_SUCCESS)                              \
      ::ember::cuda::raise_cudnn_error(ember_cudnn_status_, #call, __FILE__, __LINE__); \
  } while (0)
