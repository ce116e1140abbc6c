#include <ember/core/storage.h>

#include <cstdlib>
#include <new>

#include <ember/core/error.h>
#include <ember/cuda/cuda_api.h>

namespace ember {

std::shared_ptr<void> cpu_allocate(size_t nbytes) {
  const size_t aligned = ((nbytes ? nbytes : 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, aligned);
  if (!p) {
    throw Error(str("out of memory: could not allocate ", nbytes, " bytes on the CPU"));
  }
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

Storage::Storage(size_t nbytes, Device device) : impl_(std::make_shared<StorageImpl>()) {
  impl_->data = device.is_cpu() ? cpu_allocate(nbytes) : cuda::allocate(nbytes, device.index);
  impl_->nbytes = nbytes;
  impl_->device = device;
}

Storage::Storage(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner)
    : impl_(std::make_shared<StorageImpl>()) {
  impl_->data = std::shared_ptr<void>(owner, data);  // aliasing constructor: owner keeps data alive
  impl_->nbytes = nbytes;
  impl_->device = device;
}

}  // namespace ember
