// Copies between the CPU and CUDA devices (CUDA build): staged_copy's logic
// with cudaMemcpyAsync on the current streams. Like PyTorch's non_blocking=False,
// each copy waits for its stream, so host buffers may be freed right after.
#include <ember/core/tensor.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/error.h>
#include <ember/cuda/staged_copy.h>

namespace ember::cuda {

namespace {

class RuntimeMemcpy : public MemcpyBackend {
 public:
  RuntimeMemcpy(int dst_device, int src_device) : dst_(dst_device), src_(src_device) {}

  void to_device(void* dst, const void* src, size_t n) override { run(dst_, dst, src, n, cudaMemcpyHostToDevice); }
  void to_host(void* dst, const void* src, size_t n) override { run(src_, dst, src, n, cudaMemcpyDeviceToHost); }
  void on_device(void* dst, const void* src, size_t n) override {
    if (src_ != dst_) {
      // Work queued on the source's stream must be done before another device reads it.
      DeviceGuard guard(src_);
      EMBER_CUDA_CHECK(cudaStreamSynchronize(current_cuda_stream(src_)));
    }
    run(dst_, dst, src, n, cudaMemcpyDefault);
  }

 private:
  static void run(int device, void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
    DeviceGuard guard(device);
    cudaStream_t stream = current_cuda_stream(device);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, kind, stream));
    EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  int dst_, src_;
};

}  // namespace

void copy(Tensor& dst, const Tensor& src) {
  const int d = dst.device().is_cuda() ? dst.device().index : src.device().index;
  const int s = src.device().is_cuda() ? src.device().index : d;
  Registry::get().device(d);
  Registry::get().device(s);
  RuntimeMemcpy mem(d, s);
  staged_copy(dst, src, mem);
}

}  // namespace ember::cuda
