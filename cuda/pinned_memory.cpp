// Pinned host memory (CUDA build): the HostAllocator of cuda/host_allocator.h
// on cudaHostAlloc / cudaFreeHost and CUDA events.
#include <cuda_runtime.h>

#include <ember/core/error.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/error.h>
#include <ember/cuda/host_allocator.h>
#include <ember/cuda/pinned_memory.h>

namespace ember::cuda {

namespace {

class PinnedBackend : public AllocatorBackend {
 public:
  void* raw_alloc(size_t nbytes) override {
    void* p = nullptr;
    const cudaError_t err = cudaHostAlloc(&p, nbytes, cudaHostAllocDefault);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear it: the allocator retries, then raises its own error
      return nullptr;
    }
    EMBER_CUDA_CHECK(err);
    return p;
  }
  void raw_free(void* ptr) override { (void)cudaFreeHost(ptr); }
  MemInfo mem_info() override { return {}; }
  void* record_event(StreamId stream) override {
    cudaEvent_t e = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    EMBER_CUDA_CHECK(cudaEventRecord(e, reinterpret_cast<cudaStream_t>(stream)));
    return e;
  }
  bool event_done(void* event) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    EMBER_CUDA_CHECK(err);
    return true;
  }
  void wait_event(void* event) override { EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event))); }
  void destroy_event(void* event) override { (void)cudaEventDestroy(static_cast<cudaEvent_t>(event)); }
};

HostAllocator& host_allocator() {
  static auto* allocator = new HostAllocator(std::make_unique<PinnedBackend>());  // leaked: used during exit
  return *allocator;
}

}  // namespace

std::shared_ptr<void> host_allocate(size_t nbytes) {
  EMBER_CHECK(is_available(), Error, "pin_memory: page-locked host memory needs a usable CUDA GPU, and ",
              unavailable_reason(), ". Leave pin_memory off on this machine");
  Registry::get().device(current_device());  // the context cudaHostAlloc maps the pages into
  void* p = host_allocator().allocate(nbytes);
  return std::shared_ptr<void>(p, [](void* q) { host_allocator().free(q); });
}

bool is_pinned(const void* ptr) {
  if (!ptr || !is_available()) return false;
  if (host_allocator().owns(ptr)) return true;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

void record_host_use(const void* ptr, cudaStream_t stream) {
  host_allocator().record_use(ptr, reinterpret_cast<StreamId>(stream));
}

}  // namespace ember::cuda
