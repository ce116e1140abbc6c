// Per-device state of the CUDA backend (CUDA build only), kept in one
// registry, the backend's only global: each device's properties, caching
// allocator, stream pools, current stream and cuBLAS handle, all created at
// the device's first use.
#pragma once
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <ember/cuda/caching_allocator.h>

namespace ember::cuda {

// Makes `index` the current device for a scope (no-op when it already is).
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

struct DeviceContext {
  static constexpr int kPoolSize = 32;
  int index = 0;
  cudaDeviceProp props{};
  std::unique_ptr<CachingAllocator> allocator;
  // The current stream of this device (nullptr: the default stream). One per
  // device for the whole process, not per thread.
  std::atomic<cudaStream_t> current_stream{nullptr};

  std::mutex mutex;  // guards the lazily created members below
  std::array<cudaStream_t, kPoolSize> streams{};
  std::array<cudaStream_t, kPoolSize> high_priority_streams{};
  bool streams_created = false;
  unsigned next_stream = 0;
  unsigned next_high_priority = 0;
  cublasHandle_t cublas = nullptr;
  // cuBLAS's workspace per stream, from the caching allocator (held for the
  // process, as PyTorch's), so its memory is counted like every other block.
  std::unordered_map<cudaStream_t, std::shared_ptr<void>> cublas_workspaces;
  // cublasLtHandle_t, created at the first cuBLASLt call (cuda/matmul.cpp).
  void* cublaslt = nullptr;
  // cudnnHandle_t, created at the first cuDNN call (cuda/cudnn_common.cpp); void*
  // so that this header needs no cuDNN headers.
  void* cudnn = nullptr;
  // cusolverDnHandle_t, created at the first cuSOLVER call (cuda/linalg.cpp).
  void* cusolver = nullptr;
  // cuda/conv.cpp's cache of cuDNN descriptors and algorithm choices per
  // convolution shape, created at the first convolution (type-erased likewise).
  std::shared_ptr<void> conv_plans;
};

class Registry {
 public:
  static Registry& get();
  // 0 when CUDA cannot be used; unavailable_reason() then says why.
  int device_count();
  const std::string& unavailable_reason();
  // -1 -> the current device; throws when CUDA is unavailable or the index is out of range.
  int resolve(int index);
  // The device's context, created (and the GPU checked against the build's
  // architectures) at first use.
  DeviceContext& device(int index);
  // The context if the device was used already, else nullptr (stats queries
  // must not initialise a device).
  DeviceContext* existing(int index);
  std::vector<DeviceContext*> all_existing();

 private:
  Registry() = default;
  void probe();

  std::once_flag probed_;
  int count_ = 0;
  std::string reason_;
  std::mutex mutex_;  // serializes the creation of contexts
  std::vector<std::unique_ptr<DeviceContext>> devices_;
  // devices_[i].get() once created, read without the lock (allocations ask per tensor).
  std::unique_ptr<std::atomic<DeviceContext*>[]> ready_;
};

cudaStream_t current_cuda_stream(int index = -1);
// The device's cuBLAS handle, bound to its current stream.
cublasHandle_t cublas_handle(int index = -1);
// Checks that this build's kernels can run on the device (cuda/arch_probe.cu).
cudaError_t probe_kernel_image(int index);

}  // namespace ember::cuda
