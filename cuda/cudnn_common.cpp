// cuDNN's shared pieces: errors, the per-device handle, dtypes, descriptors.
#ifdef EMBER_HAS_CUDNN
#include <ember/cuda/cudnn_common.h>

#include <limits>
#include <mutex>

#include <ember/core/error.h>
#include <ember/cuda/context.h>

namespace ember::cuda {

void raise_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
  std::string hint;
  if (status == CUDNN_STATUS_NOT_SUPPORTED) {
    hint = " (cuDNN has no algorithm for this configuration of shapes, dtype and GPU)";
  } else if (status == CUDNN_STATUS_ALLOC_FAILED) {
    hint = " (the GPU is out of memory: free tensors or call ember.cuda.empty_cache())";
  }
  throw Error(str("cuDNN error: ", cudnnGetErrorString(status), " in ", call, " at ", file, ":", line, hint));
}

cudnnHandle_t cudnn_handle(int index) {
  DeviceContext& ctx = Registry::get().device(index);
  std::lock_guard<std::mutex> lock(ctx.mutex);
  if (!ctx.cudnn) {
    DeviceGuard guard(ctx.index);
    cudnnHandle_t h = nullptr;
    EMBER_CUDNN_CHECK(cudnnCreate(&h));
    ctx.cudnn = h;
  }
  auto* h = static_cast<cudnnHandle_t>(ctx.cudnn);
  EMBER_CUDNN_CHECK(cudnnSetStream(h, ctx.current_stream.load()));
  return h;
}

cudnnDataType_t cudnn_data_type(DType d, const char* op) {
  switch (d) {
    case DType::Float32: return CUDNN_DATA_FLOAT;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    default: throw NotImplementedError(str(op, ": not implemented for ", dtype_name(d), " tensors on CUDA"));
  }
}

cudnnDataType_t cudnn_compute_type(DType d) { return d == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

namespace {
int dim_int(int64_t v, const char* op) {
  EMBER_CHECK(v <= std::numeric_limits<int>::max(), Error, op, ": dimension ", v, " exceeds cuDNN's 32-bit limit");
  return static_cast<int>(v);
}
}  // namespace

TensorDescriptor::TensorDescriptor(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w, const char* op) {
  EMBER_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d_));
  EMBER_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d_, CUDNN_TENSOR_NCHW, cudnn_data_type(dtype, op), dim_int(n, op),
                                               dim_int(c, op), dim_int(h, op), dim_int(w, op)));
}

TensorDescriptor::~TensorDescriptor() { cudnnDestroyTensorDescriptor(d_); }

}  // namespace ember::cuda
#endif  // EMBER_HAS_CUDNN
