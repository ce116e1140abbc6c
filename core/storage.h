// Storage: a reference-counted block of device memory shared by a tensor and
// all of its views, with the version counter autograd checks saved tensors by.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <ember/core/device.h>

namespace ember {

struct StorageImpl {
  std::shared_ptr<void> data;  // owns the memory; its deleter returns it to the allocator
  size_t nbytes = 0;
  Device device;
  std::atomic<uint32_t> version{0};  // bumped by every in-place write through any view
};

class Storage {
 public:
  Storage() = default;
  // Fresh memory of `nbytes` from the device's allocator.
  Storage(size_t nbytes, Device device);
  // Wraps memory owned elsewhere (a numpy array); `owner` keeps it alive.
  Storage(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner);

  void* data() const { return impl_->data.get(); }
  size_t nbytes() const { return impl_->nbytes; }
  const Device& device() const { return impl_->device; }
  uint32_t version() const { return impl_->version.load(std::memory_order_relaxed); }
  void bump_version() { impl_->version.fetch_add(1, std::memory_order_relaxed); }
  bool defined() const { return impl_ != nullptr; }
  bool is_same(const Storage& o) const { return impl_ == o.impl_; }
  long use_count() const { return impl_.use_count(); }

 private:
  std::shared_ptr<StorageImpl> impl_;
};

// The CPU allocator: 64-byte aligned so kernels can use aligned vector loads;
// blocks of 1 MiB and more come from a bounded cache (EMBER_CPU_CACHE_MB,
// default 512) of huge-page-backed blocks.
std::shared_ptr<void> cpu_allocate(size_t nbytes);
// Returns the cached CPU blocks to the system.
void cpu_empty_cache();

}  // namespace ember
