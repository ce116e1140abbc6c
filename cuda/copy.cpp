// Copies between the CPU and CUDA devices (CUDA build): staged_copy's logic
// with cudaMemcpyAsync on the current streams. Like PyTorch's non_blocking=False,
// each copy waits for its stream, so host buffers may be freed right after.
// With non_blocking and pinned host memory on the CPU side, the copy is one
// cudaMemcpyAsync that does not wait; an event recorded for the pinned block
// keeps it from being reused before the copy has run.
// Copies within one GPU, and the cast/layout part of CPU<->GPU copies, run the
// device kernel of cuda/copy.cu.
#include <ember/core/cpu/copy.h>
#include <ember/core/ops/factory.h>
#include <ember/core/tensor.h>
#include <ember/cuda/copy.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/error.h>
#include <ember/cuda/pinned_memory.h>
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

// Whether a CPU<->CUDA copy is more than one memcpy (a cast, a broadcast or a
// layout to rearrange): then the device kernel does that part.
bool needs_kernel(const Tensor& dst, const Tensor& src) {
  return dst.dtype() != src.dtype() || dst.shape() != src.shape() || !dst.is_contiguous() || !src.is_contiguous();
}

// dst = src between a pinned, contiguous host tensor and a contiguous device
// tensor of the same dtype and shape, queued on the device's current stream.
void copy_async(Tensor& dst, const Tensor& src) {
  const bool to_device = dst.device().is_cuda();
  const int device = to_device ? dst.device().index : src.device().index;
  DeviceGuard guard(device);
  cudaStream_t stream = current_cuda_stream(device);
  const size_t n = static_cast<size_t>(dst.numel()) * dst.element_size();
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), n,
                                   to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream));
  record_host_use(to_device ? src.data_ptr() : dst.data_ptr(), stream);
}

// The non_blocking copies that need not wait; false for the others. Device
// buffers for a cast or layout change are stream-ordered like the copy itself.
bool try_copy_async(Tensor& dst, const Tensor& src) {
  const bool to_device = dst.device().is_cuda();
  const Tensor& host = to_device ? src : dst;
  if (!host.is_pinned() || !host.is_contiguous()) return false;
  if (!needs_kernel(dst, src)) {
    copy_async(dst, src);
  } else if (to_device) {
    Tensor staged = empty(src.shape(), src.dtype(), dst.device());
    copy_async(staged, src);
    copy_on_device(dst, staged);
  } else {
    Tensor packed = empty(dst.shape(), dst.dtype(), src.device());
    copy_on_device(packed, src);
    copy_async(dst, packed);
  }
  return true;
}

}  // namespace

void copy(Tensor& dst, const Tensor& src, bool non_blocking) {
  const int d = dst.device().is_cuda() ? dst.device().index : src.device().index;
  const int s = src.device().is_cuda() ? src.device().index : d;
  Registry::get().device(d);
  Registry::get().device(s);
  if (non_blocking && dst.device().is_cuda() != src.device().is_cuda() && dst.numel() > 0 &&
      try_copy_async(dst, src)) {
    return;
  }
  RuntimeMemcpy mem(d, s);
  if (dst.device().is_cuda() && dst.device() == src.device()) return copy_on_device(dst, src);
  if (dst.device().is_cuda() && src.device().is_cpu() && needs_kernel(dst, src)) {
    // Bytes over as they are (one memcpy of src's elements), then cast and lay out on the GPU.
    const Tensor host = src.detach().contiguous();
    Tensor staged = empty(host.shape(), host.dtype(), dst.device());
    staged_copy(staged, host, mem);
    return copy_on_device(dst, staged);
  }
  if (dst.device().is_cpu() && src.device().is_cuda() && needs_kernel(dst, src)) {
    Tensor packed = empty(dst.shape(), dst.dtype(), src.device());
    copy_on_device(packed, src);
    if (dst.is_contiguous()) return staged_copy(dst, packed, mem);
    Tensor host = empty(dst.shape(), dst.dtype(), dst.device());
    staged_copy(host, packed, mem);
    return cpu::copy(dst, host);
  }
  staged_copy(dst, src, mem);
}

}  // namespace ember::cuda
