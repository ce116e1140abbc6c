// The seam's device, memory and version queries (CUDA build).
#include <cstdlib>
#include <cstring>

#include <ember/core/error.h>
#include <ember/cuda/arch_list.h>
#include <ember/cuda/build_info.h>
#include <ember/cuda/context.h>
#include <ember/cuda/cuda_api.h>
#include <ember/cuda/error.h>

#ifdef EMBER_HAS_CUDNN
#include <cudnn.h>
#endif

namespace ember::cuda {

bool is_available() { return Registry::get().device_count() > 0; }
int device_count() { return Registry::get().device_count(); }
std::string unavailable_reason() { return Registry::get().unavailable_reason(); }

int driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) cudaGetLastError();
  return v;
}

int runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) cudaGetLastError();
  return v;
}

int cudnn_version() {
#ifdef EMBER_HAS_CUDNN
  return static_cast<int>(cudnnGetVersion());
#else
  return 0;
#endif
}

int current_device() { return Registry::get().resolve(-1); }

void set_device(int index) {
  EMBER_CHECK(index >= 0, ValueError, "ember.cuda.set_device: expected a device index >= 0, got ", index);
  Registry::get().resolve(index);
  EMBER_CUDA_CHECK(cudaSetDevice(index));
}

DeviceProperties device_properties(int index) {
  cudaDeviceProp p{};
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, Registry::get().resolve(index)));
  DeviceProperties out;
  out.name = p.name;
  out.total_memory = p.totalGlobalMem;
  out.major = p.major;
  out.minor = p.minor;
  out.multi_processor_count = p.multiProcessorCount;
  return out;
}

std::string arch_problem(int index) {
  const int i = Registry::get().resolve(index);
  const DeviceProperties p = device_properties(i);
  return arch_mismatch(i, p.name, p.major, p.minor, compiled_archs());
}

void synchronize(int index) {
  DeviceContext& ctx = Registry::get().device(index);
  DeviceGuard guard(ctx.index);
  EMBER_CUDA_CHECK(cudaDeviceSynchronize());
}

std::shared_ptr<void> allocate(size_t nbytes, int index) {
  DeviceContext& ctx = Registry::get().device(index);
  CachingAllocator* allocator = ctx.allocator.get();
  void* p = allocator->allocate(nbytes, reinterpret_cast<StreamId>(ctx.current_stream.load()));
  return std::shared_ptr<void>(p, [allocator](void* q) { allocator->free(q); });
}

AllocatorStats memory_stats(int index) {
  DeviceContext* ctx = Registry::get().existing(index);
  return ctx ? ctx->allocator->stats() : AllocatorStats{};
}

void reset_peak_memory_stats(int index) {
  if (DeviceContext* ctx = Registry::get().existing(index)) ctx->allocator->reset_peak_stats();
}

void empty_cache() {
  for (DeviceContext* ctx : Registry::get().all_existing()) ctx->allocator->empty_cache();
}

std::string memory_summary(int index) { return Registry::get().device(index).allocator->summary(); }

AllocatorBackend::MemInfo mem_get_info(int index) {
  DeviceContext& ctx = Registry::get().device(index);
  DeviceGuard guard(ctx.index);
  AllocatorBackend::MemInfo info;
  EMBER_CUDA_CHECK(cudaMemGetInfo(&info.free, &info.total));
  return info;
}

bool launch_blocking() {
  static const bool on = [] {
    const char* v = std::getenv("EMBER_LAUNCH_BLOCKING");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

}  // namespace ember::cuda
